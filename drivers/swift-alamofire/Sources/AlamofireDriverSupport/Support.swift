@_exported import Alamofire
@_exported import AlamofireCorelibsSupport
@_exported import DriverKit
import Foundation

/// A token endpoint answer (RFC 6749 section 5.1).
public struct TokenResponse: Decodable, Sendable {
    public var access_token: String
    public var refresh_token: String?
    public var expires_in: Double?
}

/// A grant at the token endpoint failed (the refresh's error, as the recipe passes it on).
public struct GrantFailed: Error, CustomStringConvertible {
    public let error: AFError
    public var description: String { "the token endpoint: \(error)" }
}

/// The recipes' session.
public let driverSession = corelibsSafeSession()

/// The app's side of either recipe: sign in with the password grant, then
/// make each call through Alamofire with the recipe's interceptor.

public struct AlamofireDriver: DriverClient {
    public let hello: Hello
    public let interceptor: any RequestInterceptor
    /// Keeps the tokens of a sign-in where the recipe wants them.
    public let signedIn: @Sendable (TokenResponse) -> Void

    public init(hello: Hello, interceptor: any RequestInterceptor, signedIn: @escaping @Sendable (TokenResponse) -> Void) {
        self.hello = hello
        self.interceptor = interceptor
        self.signedIn = signedIn
    }

    public var tokenURL: URL { URL(string: hello.baseURL + "/oauth/token")! }
    public var clientAuthorization: HTTPHeader { .authorization(username: hello.clientID, password: hello.clientSecret) }

    /// The token grant (sign-in or refresh), through a session without the
    /// interceptor. A failure is a `GrantFailed`, so that the app can tell a
    /// refresh that failed from a call that did.
    public func grant(_ parameters: [String: String]) async -> Result<TokenResponse, any Error> {
        await driverSession.request(tokenURL, method: .post, parameters: parameters, headers: [clientAuthorization])
            .validate().serializingDecodable(TokenResponse.self).result.mapError { GrantFailed(error: $0) }
    }

    public func login(username: String, password: String) async -> DriverOutcome {
        switch await grant(["grant_type": "password", "username": username, "password": password]) {
        case .success(let tokens):
            signedIn(tokens)
            return DriverOutcome(.ok)
        case .failure(let error):
            return DriverOutcome(.httpError, status: (error as? GrantFailed)?.error.responseCode, message: "\(error)")
        }
    }

    public func request(_ request: DriverRequest) async -> DriverOutcome {
        var urlRequest = URLRequest(url: URL(string: request.url ?? hello.baseURL + request.path)!)
        urlRequest.method = HTTPMethod(rawValue: request.method)
        urlRequest.headers = HTTPHeaders(request.headers)
        urlRequest.httpBody = request.body.map { Data($0.utf8) }
        // validate() matters: the retrier only sees responses that failed validation (Alamofire/Alamofire#2756).
        let interceptor = Interceptor(retriers: [ProgressTotalsReset()], interceptors: [interceptor])
        let response = await driverSession.request(urlRequest, interceptor: interceptor).validate().serializingString().response
        // The retrier gave up, or the adapter could not renew a token that
        // ran out by the device's clock. With a refresh's error: the token
        // endpoint refused the refresh token (400 or 401), so the app shows
        // its sign-in screen; any other refresh failure (a 503, a 429, a
        // reset) is an error the app shows, the session kept. With the call's
        // own error, the app sees the call's answer, below.
        if let refresh = Self.refreshError(response.error) {
            let status = refresh.error.responseCode
            if status == 400 || status == 401 { return DriverOutcome(.reauthRequired, status: status, message: "\(response.error!)") }
            // A call the adapter stopped was never sent: the status is the refresh's, not the call's.
            guard response.response != nil else { return DriverOutcome(.transportError, message: "the refresh failed: \(refresh.error)") }
            return DriverOutcome(status == nil ? .transportError : .httpError, status: status, message: "the refresh failed: \(refresh.error)")
        }
        guard let status = response.response?.statusCode else {
            return DriverOutcome(.transportError, message: "\(String(describing: response.error))")
        }
        let body = response.data.map { String(decoding: $0, as: UTF8.self) }
        return DriverOutcome((200..<300).contains(status) ? .ok : .httpError, status: status, body: body)
    }

    /// The refresh's own failure inside Alamofire's error, from either path.
    static func refreshError(_ error: AFError?) -> GrantFailed? {
        switch error {
        case .requestRetryFailed(let retryError, _)?: retryError as? GrantFailed
        case .requestAdaptationFailed(let adaptError)?: adaptError as? GrantFailed
        default: nil
        }
    }
}
