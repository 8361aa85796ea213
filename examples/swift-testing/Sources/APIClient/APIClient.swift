import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One call the app makes.
public struct APIRequest: Sendable {
    public var method: String
    /// The path on the API's host (`/api/items`).
    public var path: String
    public var headers: [String: String]
    public var body: Data?

    public init(method: String = "GET", path: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// The API's answer: any status, for the app to read.
public struct APIResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    func header(_ name: String) -> String? { headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value }

    /// A 401 that a new token can cure: no challenge (a plain 401), or a
    /// `Bearer` one among the challenges (RFC 6750 §3). A 401 asking for
    /// Basic credentials is not about the token.
    var asksForANewToken: Bool {
        guard status == 401 else { return false }
        guard let challenges = header("WWW-Authenticate") else { return true }
        return challenges.range(of: #"(^|,)\s*bearer(\s|,|$)"#, options: [.regularExpression, .caseInsensitive]) != nil
    }

    /// A 429 or 503 that says when to come back (whole seconds).
    var retryAfter: Double? {
        guard status == 429 || status == 503, let value = header("Retry-After") else { return nil }
        return Double(value.trimmingCharacters(in: .whitespaces))
    }
}

/// The app's API client: adds the bearer token to every call, renews it
/// when it has expired by this device's clock or the API answers 401, one
/// renewal for all calls at once, and retries the call once with the new
/// token, body and headers intact.
public final class APIClient: Sendable {
    public let baseURL: URL
    private let session: TokenSession
    private let http: HTTP
    /// The longest Retry-After the client waits out before retrying once; a longer one reaches the app.
    public let longestRetryAfter: Double

    /// `tokenPath`: the token endpoint on the API's host. `sharesRenewal`:
    /// false makes every call renew for itself, the bug the suite's case
    /// 1.1 catches (the example's tests turn it off once to show that).
    public init(
        baseURL: URL, clientID: String, clientSecret: String, tokenPath: String = "/oauth/token", timeout: Double = 10,
        longestRetryAfter: Double = 5, sharesRenewal: Bool = true
    ) {
        self.baseURL = baseURL
        self.http = HTTP(timeout: timeout)
        // The token endpoint on connections of its own, none reused: on Linux,
        // URLSession (FoundationNetworking, on libcurl) sends a POST again by
        // itself, without its body, when a kept-alive connection it reused
        // closes without an answer, and a refresh whose answer was lost then
        // came back as an empty request (400) after the whole timeout.
        let endpoint = TokenEndpoint(
            url: baseURL.appendingPathComponent(tokenPath), clientID: clientID, clientSecret: clientSecret,
            http: HTTP(timeout: timeout, reusesConnections: false))
        self.session = TokenSession(endpoint: endpoint, sharesRenewal: sharesRenewal)
        self.longestRetryAfter = longestRetryAfter
    }

    /// Another instance of the app's client (its share extension, a widget)
    /// over the same session: one store of tokens and one renewal at a time
    /// for both, so neither spends a refresh token the other already
    /// rotated. (Two processes share the session through the keychain and a
    /// lock; one process, as here, through the object.)
    public init(sharingSessionOf other: APIClient) {
        baseURL = other.baseURL
        http = other.http
        session = other.session
        longestRetryAfter = other.longestRetryAfter
    }

    public func signIn(username: String, password: String) async throws {
        try await session.signIn(username: username, password: password)
    }

    /// Ends the session: calls waiting for a renewal end with `signInRequired`, later calls too until the next sign-in.
    public func signOut() async {
        await session.signOut()
    }

    /// Sends `request` with the session's token; throws `APIError`.
    public func send(_ request: APIRequest) async throws -> APIResponse {
        var token = try await session.token()
        var renewed = false
        var waited = false
        while true {
            let response = try await transmit(request, token: token)
            if response.asksForANewToken && !renewed {
                renewed = true
                token = try await session.renew(replacing: token)
                continue
            }
            if let seconds = response.retryAfter, seconds <= longestRetryAfter, !waited {
                waited = true
                try await Task.sleep(for: .seconds(seconds))
                token = try await session.token()
                continue
            }
            return response
        }
    }

    private func transmit(_ call: APIRequest, token: String) async throws -> APIResponse {
        guard let url = URL(string: call.path, relativeTo: baseURL) else { throw APIError.transport("not a path: \(call.path)") }
        var request = URLRequest(url: url)
        request.httpMethod = call.method
        for (name, value) in call.headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.httpBody = call.body
        do {
            let (data, response) = try await http.send(request)
            var headers: [String: String] = [:]
            for case (let name as String, let value as String) in response.allHeaderFields { headers[name] = value }
            return APIResponse(status: response.statusCode, headers: headers, body: data)
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.transport("\(error)")
        }
    }
}
