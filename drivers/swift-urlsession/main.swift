import DriverKit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// authmock driver for URLSession with the token-refresh pattern most iOS
// blog posts show: an actor that hands out a valid token and shares one
// refresh task while it runs, and a network layer that, on a 401, asks for
// a refresh and retries once. Written as those posts write it, including
// what they leave out (see drivers/swift-urlsession/README.md).

struct Token: Sendable {
    var access: String
    var refresh: String?
    var expiresAt: Date
    var isValid: Bool { expiresAt > Date() }
}

enum AuthError: Error { case missingToken, refreshRefused(Int) }

actor AuthManager {
    private let base: URL
    private let basic: String
    private var current: Token?
    private var refreshTask: Task<Token, Error>?

    init(base: URL, clientID: String, clientSecret: String) {
        self.base = base
        self.basic = "Basic " + Data("\(clientID):\(clientSecret)".utf8).base64EncodedString()
    }

    func validToken() async throws -> Token {
        if let refreshTask { return try await refreshTask.value }
        guard let current else { throw AuthError.missingToken }
        if current.isValid { return current }
        return try await refreshToken()
    }

    func refreshToken() async throws -> Token {
        if let refreshTask { return try await refreshTask.value }
        guard let refresh = current?.refresh else { throw AuthError.missingToken }
        let task = Task { () throws -> Token in
            defer { refreshTask = nil }
            let token = try await grant(["grant_type": "refresh_token", "refresh_token": refresh], keeping: refresh)
            current = token
            return token
        }
        refreshTask = task
        return try await task.value
    }

    func signIn(username: String, password: String) async throws {
        current = try await grant(["grant_type": "password", "username": username, "password": password], keeping: nil)
    }

    private func grant(_ form: [String: String], keeping refresh: String?) async throws -> Token {
        var request = URLRequest(url: base.appendingPathComponent("oauth/token"))
        request.httpMethod = "POST"
        request.setValue(basic, forHTTPHeaderField: "Authorization")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = Data(form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&").utf8)
        let prepared = request
        let (data, response) = try await withTimeout(seconds: 8) { try await URLSession.shared.data(for: prepared) }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let json = try JSONSerialization.jsonObject(with: data) as? [String: Any], let access = json["access_token"] as? String else {
            throw AuthError.refreshRefused(status)
        }
        return Token(access: access, refresh: json["refresh_token"] as? String ?? refresh,
                     expiresAt: Date().addingTimeInterval((json["expires_in"] as? Double) ?? 300))
    }
}

struct URLSessionDriver: DriverClient {
    let base: URL
    let auth: AuthManager

    func login(username: String, password: String) async -> DriverOutcome {
        do {
            try await auth.signIn(username: username, password: password)
            return DriverOutcome(.ok)
        } catch {
            return DriverOutcome(.httpError, message: "\(error)")
        }
    }

    func request(_ request: DriverRequest) async -> DriverOutcome {
        do {
            return try await load(request, allowRetry: true)
        } catch AuthError.refreshRefused(let status) {
            return DriverOutcome(.reauthRequired, status: status, message: "refresh refused")
        } catch {
            return DriverOutcome(.transportError, message: "\(error)")
        }
    }

    func load(_ call: DriverRequest, allowRetry: Bool) async throws -> DriverOutcome {
        let token = try await auth.validToken()
        let url = call.url.flatMap(URL.init(string:)) ?? URL(string: base.absoluteString + call.path)!
        var request = URLRequest(url: url, timeoutInterval: 8)
        request.httpMethod = call.method
        for (name, value) in call.headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("Bearer \(token.access)", forHTTPHeaderField: "Authorization")
        request.httpBody = call.body.map { Data($0.utf8) }
        let prepared = request
        let (data, response) = try await withTimeout(seconds: 8) { try await URLSession.shared.data(for: prepared) }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status == 401, allowRetry {
            _ = try await auth.refreshToken()
            return try await load(call, allowRetry: false)
        }
        return DriverOutcome((200..<300).contains(status) ? .ok : .httpError, status: status, body: String(decoding: data, as: UTF8.self))
    }
}

struct TimedOut: Error, CustomStringConvertible {
    var description: String { "no answer within 8 s (FoundationNetworking's URLSession can hang on a lost connection or on a 401 with a Basic challenge)" }
}

/// URLSession on Linux does not always honour timeoutInterval; the app gives up itself.
func withTimeout<T: Sendable>(seconds: Double, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

await Driver.run(name: "urlsession-blog-interceptor", version: "foundation", profiles: ["oauth2"], capabilities: ["url"]) { hello in
    let base = URL(string: hello.baseURL)!
    return URLSessionDriver(base: base, auth: AuthManager(base: base, clientID: hello.clientID, clientSecret: hello.clientSecret))
}
