// An authmock driver for Alamofire's AuthenticationInterceptor, for macOS and
// iOS developers. Alamofire is not in this machine's package mirror, so CI
// does not build this file; build it in a package of your own that depends
// on Alamofire 5 and on authmock's DriverKit product.
import Alamofire
import DriverKit
import Foundation

struct OAuthCredential: AuthenticationCredential {
    var accessToken: String
    var refreshToken: String
    var expiration: Date
    // Refresh five minutes (or a quarter of a short lifetime) before expiry.
    var requiresRefresh: Bool { Date(timeIntervalSinceNow: 30) > expiration }
}

final class OAuthAuthenticator: Authenticator, @unchecked Sendable {
    let tokenURL: URL
    let clientID: String
    let clientSecret: String

    init(hello: Hello) {
        tokenURL = URL(string: hello.baseURL + "/oauth/token")!
        clientID = hello.clientID
        clientSecret = hello.clientSecret
    }

    func apply(_ credential: OAuthCredential, to urlRequest: inout URLRequest) {
        urlRequest.headers.add(.authorization(bearerToken: credential.accessToken))
    }

    func refresh(_ credential: OAuthCredential, for session: Session, completion: @escaping (Result<OAuthCredential, Error>) -> Void) {
        let parameters = ["grant_type": "refresh_token", "refresh_token": credential.refreshToken]
        AF.request(tokenURL, method: .post, parameters: parameters, headers: [.authorization(username: clientID, password: clientSecret)])
            .validate().responseDecodable(of: TokenResponse.self) { response in
                completion(response.result.map { $0.credential(keeping: credential.refreshToken) }.mapError { $0 })
            }
    }

    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: Error) -> Bool {
        response.statusCode == 401
    }

    // The late-401 check: only refresh if the request carried the current token.
    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
        urlRequest.headers["Authorization"] == HTTPHeader.authorization(bearerToken: credential.accessToken).value
    }
}

struct TokenResponse: Decodable {
    var access_token: String
    var refresh_token: String?
    var expires_in: Double
    func credential(keeping refresh: String) -> OAuthCredential {
        OAuthCredential(accessToken: access_token, refreshToken: refresh_token ?? refresh, expiration: Date(timeIntervalSinceNow: expires_in))
    }
}

struct AlamofireDriver: DriverClient {
    let base: String
    let authenticator: OAuthAuthenticator
    let interceptor: AuthenticationInterceptor<OAuthAuthenticator>

    func login(username: String, password: String) async -> DriverOutcome {
        let response = await AF.request(authenticator.tokenURL, method: .post,
                                        parameters: ["grant_type": "password", "username": username, "password": password],
                                        headers: [.authorization(username: authenticator.clientID, password: authenticator.clientSecret)])
            .validate().serializingDecodable(TokenResponse.self).response
        guard let tokens = response.value else { return DriverOutcome(.httpError, status: response.response?.statusCode) }
        interceptor.credential = tokens.credential(keeping: tokens.refresh_token ?? "")
        return DriverOutcome(.ok)
    }

    func request(_ request: DriverRequest) async -> DriverOutcome {
        var urlRequest = URLRequest(url: URL(string: request.url ?? base + request.path)!)
        urlRequest.method = HTTPMethod(rawValue: request.method)
        urlRequest.headers = HTTPHeaders(request.headers)
        urlRequest.httpBody = request.body.map { Data($0.utf8) }
        // validate() matters: Alamofire's retrier only sees responses that failed validation (Alamofire/Alamofire#2756).
        let response = await AF.request(urlRequest, interceptor: interceptor).validate().serializingString().response
        if case .requestRetryFailed = response.error { return DriverOutcome(.reauthRequired, message: "\(response.error!)") }
        guard let status = response.response?.statusCode else { return DriverOutcome(.transportError, message: "\(String(describing: response.error))") }
        return DriverOutcome((200..<300).contains(status) ? .ok : .httpError, status: status, body: response.data.map { String(decoding: $0, as: UTF8.self) })
    }
}

await Driver.run(name: "alamofire-authentication-interceptor", version: "5", profiles: ["oauth2"], capabilities: ["url"]) { hello in
    let authenticator = OAuthAuthenticator(hello: hello)
    return AlamofireDriver(base: hello.baseURL, authenticator: authenticator, interceptor: AuthenticationInterceptor(authenticator: authenticator))
}
