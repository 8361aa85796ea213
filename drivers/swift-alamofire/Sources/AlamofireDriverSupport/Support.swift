@_exported import Alamofire
@_exported import DriverKit
import Foundation

/// A token endpoint answer (RFC 6749 section 5.1).
public struct TokenResponse: Decodable, Sendable {
    public var access_token: String
    public var refresh_token: String?
    public var expires_in: Double?
}

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

    /// The token grant (sign-in or refresh), through a session without the interceptor.
    public func grant(_ parameters: [String: String]) async -> Result<TokenResponse, AFError> {
        await AF.request(tokenURL, method: .post, parameters: parameters, headers: [clientAuthorization])
            .validate().serializingDecodable(TokenResponse.self).result
    }

    public func login(username: String, password: String) async -> DriverOutcome {
        switch await grant(["grant_type": "password", "username": username, "password": password]) {
        case .success(let tokens):
            signedIn(tokens)
            return DriverOutcome(.ok)
        case .failure(let error):
            return DriverOutcome(.httpError, status: error.responseCode, message: "\(error)")
        }
    }

    public func request(_ request: DriverRequest) async -> DriverOutcome {
        var urlRequest = URLRequest(url: URL(string: request.url ?? hello.baseURL + request.path)!)
        urlRequest.method = HTTPMethod(rawValue: request.method)
        urlRequest.headers = HTTPHeaders(request.headers)
        urlRequest.httpBody = request.body.map { Data($0.utf8) }
        // validate() matters: the retrier only sees responses that failed validation (Alamofire/Alamofire#2756).
        let response = await AF.request(urlRequest, interceptor: interceptor).validate().serializingString().response
        // A refused refresh: the retrier gave up with the refresh's own error.
        if case .requestRetryFailed = response.error { return DriverOutcome(.reauthRequired, message: "\(response.error!)") }
        guard let status = response.response?.statusCode else { return DriverOutcome(.transportError, message: "\(String(describing: response.error))") }
        let body = response.data.map { String(decoding: $0, as: UTF8.self) }
        return DriverOutcome((200..<300).contains(status) ? .ok : .httpError, status: status, body: body)
    }
}
