import AuthmockCore
import DriverProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// OpenID Connect on the oauth2 dialect (docs/oidc.md): the JWKS, userinfo
/// and RP-initiated logout. Id tokens come from the token endpoint when the
/// scope has `openid`; discovery is `/.well-known/openid-configuration`.
enum OpenIDRoutes {
    /// The public keys, at `path` (a dialect's `jwt.issuer_path` serves them under its issuer too).
    static func addJWKS(at path: String, to routes: ClientRoutes, mock: Authmock) {
        routes.get(path) { _, _ in
            // On a shared store, `now()` also installs a rotation made through another replica.
            let now = try await mock.authority.now()
            // Cacheable, as real providers answer: a client must refetch on a `kid` it does not know.
            return JSONResponse.object(["keys": mock.authority.keyRing.jwks(at: now)], headers: [.cacheControl: "public, max-age=300"])
        }
    }

    static let jwks = "/oauth/jwks"
    static let userinfo = "/oauth/userinfo"
    static let logout = "/oauth/logout"

    static func add(to routes: ClientRoutes, mock: Authmock, profile: OAuth2Dialect) {
        addJWKS(at: jwks, to: routes, mock: mock)
        let answerUserinfo: @Sendable (Request, AuthmockRequestContext) async throws -> Response = { request, context in
            switch try await Resources.authorizeBearer(request, context: context, mock: mock) {
            case .failure(let refusal): return profile.fail(refusal, context: context)
            case .success(let grant):
                var claims = mock.authority.userClaims(of: grant.subject).mapValues(\.foundationValue)
                claims["sub"] = grant.subject
                return JSONResponse.object(claims)
            }
        }
        routes.get(userinfo, use: answerUserinfo)
        routes.post(userinfo, use: answerUserinfo)
        routes.get(logout) { request, context in
            let query = FormBody(query: request.uri.query)
            func param(_ name: String) -> String? { query[name] }
            // RP-initiated logout: the login the hint names ends (its tokens are revoked).
            if let hint = param("id_token_hint"), try await !mock.authority.endSession(idTokenHint: hint) {
                return profile.fail(OAuth2Error.logoutBadHint, context: context)
            }
            guard let redirect = param("post_logout_redirect_uri"), var target = URLComponents(string: redirect), target.scheme != nil else {
                return JSONResponse.object(["signed_out": true], headers: [.cacheControl: "no-store"])
            }
            if let state = param("state") { target.queryItems = (target.queryItems ?? []) + [URLQueryItem(name: "state", value: state)] }
            return Response(status: .found, headers: [.location: target.string ?? redirect, .cacheControl: "no-store"])
        }
    }

    /// `claims_supported`: the standard ones and every configured claim name.
    static func claimsSupported(_ directory: Directory) -> [String] {
        let standard = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "azp", "sid"]
        return standard + Set(directory.users.flatMap { $0.claims?.keys.map { $0 } ?? [] }).subtracting(standard).sorted()
    }
}
