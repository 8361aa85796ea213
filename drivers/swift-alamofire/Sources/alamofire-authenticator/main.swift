// Recipe 1: Alamofire's AuthenticationInterceptor with an Authenticator,
// written as Alamofire's documentation (Usage.md, "AuthenticationInterceptor")
// shows it, including isRequest(_:authenticatedWith:), the check that keeps a
// late 401 from refreshing twice. The interceptor itself queues the calls
// that arrive during a refresh and refreshes once.
import AlamofireDriverSupport
import Foundation

struct OAuthCredential: AuthenticationCredential {
    var accessToken: String
    var refreshToken: String
    var expiration: Date
    // Refresh shortly before the token expires, by the device's clock.
    var requiresRefresh: Bool { Date(timeIntervalSinceNow: 30) > expiration }

    init(_ tokens: TokenResponse, keeping refresh: String = "") {
        accessToken = tokens.access_token
        refreshToken = tokens.refresh_token ?? refresh
        expiration = Date(timeIntervalSinceNow: tokens.expires_in ?? 3600)
    }
}

final class OAuthAuthenticator: Authenticator, @unchecked Sendable {
    var grant: (@Sendable ([String: String]) async -> Result<TokenResponse, any Error>)?

    func apply(_ credential: OAuthCredential, to urlRequest: inout URLRequest) {
        urlRequest.headers.add(.authorization(bearerToken: credential.accessToken))
    }

    func refresh(_ credential: OAuthCredential, for session: Session, completion: @escaping @Sendable (Result<OAuthCredential, any Error>) -> Void) {
        let grant = grant!
        Task {
            let result = await grant(["grant_type": "refresh_token", "refresh_token": credential.refreshToken])
            completion(result.map { OAuthCredential($0, keeping: credential.refreshToken) })
        }
    }

    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error) -> Bool {
        response.statusCode == 401
    }

    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
        urlRequest.headers["Authorization"] == HTTPHeader.authorization(bearerToken: credential.accessToken).value
    }
}

// The credential renews 30 s ahead (L14): the driver says so, so clock variants give it tokens that outlive the margin.
await Driver.run(
    name: "alamofire-authentication-interceptor", version: "5", profiles: ["oauth2"], capabilities: ["url"], renewalMargin: 30
) { hello in
    let authenticator = OAuthAuthenticator()
    let interceptor = AuthenticationInterceptor(authenticator: authenticator)
    let driver = AlamofireDriver(hello: hello, interceptor: interceptor) { tokens in interceptor.credential = OAuthCredential(tokens) }
    authenticator.grant = { await driver.grant($0) }
    return driver
}
