import JWTKit
import DriverProtocol
public import AuthmockCore
import AuthmockModel
import Foundation
public import HTTPTypes
public import Hummingbird
import NIOCore

/// The standards dialect: RFC 6749 token endpoint (password, client
/// credentials, refresh token, authorization code with PKCE), RFC 7009
/// revocation, RFC 7662 introspection, RFC 8414 metadata, RFC 6750 errors.
/// With `errors: .rfcLax` it makes the mistakes vendor servers make.
public struct OAuth2Dialect: Dialect {
    public let name = DialectName.oauth2
    public let summary = "Standard OAuth 2.0: /oauth/token, /oauth/authorize (PKCE), /oauth/revoke, /oauth/introspect"
    public let errors: OAuth2ErrorStyle

    public init(errors: OAuth2ErrorStyle = .strict) {
        self.errors = errors
    }

    public func addRoutes(to routes: ClientRoutes, mock: Authmock) {
        routes.get("/.well-known/oauth-authorization-server") { _, _ in metadata(mock, openID: false) }
        routes.get("/.well-known/openid-configuration") { _, _ in metadata(mock, openID: true) }
        routes.get("/oauth/authorize") { request, context in try await authorize(request, context: context, mock: mock) }
        OpenIDRoutes.add(to: routes, mock: mock, profile: self)
        routes.issuing(.post, "/oauth/token") { request, context in
            var answer: ClientAnswer
            switch formRequest(request, context: context, mock: mock) {
            case .refused(let response): answer = .plain(response)
            case .accepted(let form, let client): answer = try await token(form: form, client: client, context: context, mock: mock)
            }
            // rfc-lax: some vendors answer every token endpoint error with 401.
            if errors == .rfcLax, answer.response.status == .badRequest { answer.response.status = .unauthorized }
            return answer
        }
        tokenRoute("/oauth/revoke", routes: routes, mock: mock) { token in
            try await mock.authority.revoke(token: token)
            return Response(status: .ok, headers: [.cacheControl: "no-store"])
        }
        tokenRoute("/oauth/introspect", routes: routes, mock: mock) { token in
            introspection(try await mock.authority.introspect(token: token), issuer: mock.authority.issuer)
        }
        // The POST-only endpoints asked with another method: 405 with `Allow`, as servers answer, not "no such endpoint".
        for path in ["/oauth/token", "/oauth/revoke", "/oauth/introspect"] {
            for method in [HTTPRequest.Method.get, .put, .patch, .delete] {
                routes.on(path, method: method) { request, context in
                    fail(.methodNotAllowed(method: "\(request.method)", path: path), context: context)
                }
            }
        }
    }

    /// RFC 7009 and RFC 7662 endpoints: an authenticated client's form with a `token`.
    private func tokenRoute(_ path: String, routes: ClientRoutes, mock: Authmock, _ handle: @escaping @Sendable (String) async throws -> Response) {
        routes.post(path) { request, context in
            switch formRequest(request, context: context, mock: mock) {
            case .refused(let response): return response
            case .accepted(let form, _):
                guard let token = form["token"] else { return fail(.body(.missing("token")), context: context) }
                return try await handle(token)
            }
        }
    }

    public func classify(method: HTTPRequest.Method, path: String, query: String?, headers: HTTPFields, body: ByteBuffer) -> RouteClassification {
        switch path {
        case "/oauth/token":
            let parsed = RequestBody.form(body)
            let form = if case .form(.success(let form)) = parsed { form } else { FormBody?.none }
            let grant = form?["grant_type"]
            return .init(
                kind: grant == "refresh_token" ? .refresh : .login, grantType: grant,
                refreshToken: grant == "refresh_token" ? form?["refresh_token"] : nil, body: parsed)
        case "/oauth/authorize": return .init(kind: .authorize)
        case OpenIDRoutes.userinfo:
            var route = RouteClassification(kind: .resource)
            route.scope = "openid"
            return route
        case OpenIDRoutes.jwks: return .init(kind: .metadata)
        case OpenIDRoutes.logout: return .init(kind: .revoke)
        case "/oauth/revoke":
            // The token revoked is journaled as a presented refresh token (or an access token in its place).
            let parsed = RequestBody.form(body)
            let token = if case .form(.success(let form)) = parsed { form["token"] } else { String?.none }
            return .init(kind: .revoke, refreshToken: token, body: parsed)
        case "/oauth/introspect": return .init(kind: .introspect, body: .form(body))
        default: return .shared(path: path)
        }
    }

    // MARK: Encodings

    public func errorBody(_ answer: ErrorAnswer) -> ByteBuffer {
        var description = answer.row.message
        if let detail = answer.detail { description += ": \(detail)" }
        return JSONResponse.bytes(["error": answer.row.code, "error_description": description])
    }

    /// RFC 6750 section 3 for resources: a challenge without `error` when no
    /// token was sent, `invalid_token` or `insufficient_scope` otherwise
    /// (none in rfc-lax). RFC 6749 section 5.2 for the token endpoint.
    public func answer(to situation: Situation) -> ErrorAnswer {
        var answer = strictAnswer(to: situation)
        if errors == .rfcLax {
            if case .refreshToken(let failure) = situation {
                answer = ErrorAnswer(OAuth2LaxError.deadRefreshToken, detail: OAuth2Error.refresh(failure).row.message)
            }
            if answer.status == 401, answer.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true { answer.headers[.wwwAuthenticate] = nil }
        }
        return answer
    }

    private func strictAnswer(to situation: Situation) -> ErrorAnswer {
        let bare = #"Bearer realm="authmock""#
        func invalidToken(_ error: OAuth2Error, detail: String? = nil) -> ErrorAnswer {
            let challenge = bare + #", error="invalid_token", error_description="\#(error.row.message)""#
            return ErrorAnswer(error, detail: detail, headers: [.wwwAuthenticate: challenge])
        }
        switch situation {
        // Servers answer 405 on a token endpoint asked with GET (RFC 6749 section 3.2: it takes POST).
        case .methodNotAllowed: return ErrorAnswer(OAuth2Error.methodNotAllowed, detail: situation.detail, headers: [.allow: "POST"])
        case .notFound, .requestUnmatched, .malformedFraming, .payloadTooLarge, .storeUnavailable, .internalError: return situation.commonAnswer
        case .body(.missing): return ErrorAnswer(OAuth2Error.missingParameter, detail: situation.detail)
        case .body: return ErrorAnswer(OAuth2Error.malformedBody)
        // RFC 6749 has one answer for both: `invalid_grant`.
        case .wrongCredentials, .unknownUser: return ErrorAnswer(OAuth2Error.wrongCredentials)
        case .unknownClient: return ErrorAnswer(OAuth2Error.invalidClient)
        case .refreshToken(let failure): return ErrorAnswer(OAuth2Error.refresh(failure))
        // A refresh here sends no access token; one in refresh_token's place is simply not a refresh token.
        case .refreshTokenMalformed, .accessTokenAsRefreshToken, .accessTokenMismatch, .bearerMissing:
            return ErrorAnswer(OAuth2Error.refresh(.unknown))
        case .noAccessToken(let notBearer):
            return ErrorAnswer(notBearer ? OAuth2Error.resourceNotBearer : .resourceMissingToken, headers: [.wwwAuthenticate: bare])
        case .accessToken(.missing): return ErrorAnswer(OAuth2Error.resourceToken(.missing), headers: [.wwwAuthenticate: bare])
        case .refreshTokenAsAccessToken: return invalidToken(.resourceToken(.malformed), detail: "a refresh token is not an access token")
        case .accessToken(let failure): return invalidToken(.resourceToken(failure))
        case .insufficientScope(let scope):
            let error = OAuth2Error.insufficientScope
            let challenge = bare + #", error="insufficient_scope", error_description="\#(error.row.message)", scope="\#(scope)""#
            return ErrorAnswer(error, detail: situation.detail, headers: [.wwwAuthenticate: challenge])
        }
    }

    public func startupHints(baseURL: String, directory: Directory) -> [String] {
        let user = directory.users.first ?? Directory.defaultUser
        let client = directory.clients.first ?? Directory.defaultClient
        let auth = client.secret.map { "-u \(client.id):\($0)" } ?? "-d client_id=\(client.id)"
        return [
            "Sign in (password grant):",
            "  curl -s \(auth) -d grant_type=password -d username=\(user.username) -d password=\(user.password) \(baseURL)/oauth/token",
            "Call the API:",
            "  curl -s -H \"Authorization: Bearer $ACCESS_TOKEN\" \(baseURL)/api/me",
            "Refresh:",
            "  curl -s \(auth) -d grant_type=refresh_token -d refresh_token=$REFRESH_TOKEN \(baseURL)/oauth/token",
        ]
    }

    // MARK: Token endpoint

    private func token(form: FormBody, client: Client, context: AuthmockRequestContext, mock: Authmock) async throws -> ClientAnswer {
        guard let grantType = form["grant_type"] else { return .plain(fail(.body(.missing("grant_type")), context: context)) }
        switch grantType {
        case "password":
            guard let username = form["username"] else { return .plain(fail(.body(.missing("username")), context: context)) }
            guard let password = form["password"] else { return .plain(fail(.body(.missing("password")), context: context)) }
            guard let scope = resolveScope(form["scope"], client: client) else { return .plain(fail(OAuth2Error.invalidScope, context: context)) }
            guard let user = mock.directory.authenticate(username: username, password: password) else {
                return .plain(fail(.wrongCredentials, context: context))
            }
            return try await success(
                try await mock.authority.issue(subject: user.username, clientID: client.id, scope: scope), context: context, mock: mock)
        case "client_credentials":
            // No user signs in: no id token, whatever the scope.
            guard client.secret != nil else { return .plain(fail(OAuth2Error.unauthorizedClient, detail: "client_credentials", context: context)) }
            guard let scope = resolveScope(form["scope"], client: client) else { return .plain(fail(OAuth2Error.invalidScope, context: context)) }
            return try await success(
                try await mock.authority.issueWithoutRefresh(subject: client.id, clientID: client.id, scope: scope), context: context, mock: mock)
        case "refresh_token":
            guard let refreshToken = form["refresh_token"] else { return .plain(fail(.body(.missing("refresh_token")), context: context)) }
            switch try await mock.authority.refresh(refreshToken, clientID: client.id, arrivedAt: context.arrivedAt) {
            case .success(let issued): return try await success(issued, context: context, mock: mock)
            case .failure(let failure): return .plain(fail(.refreshToken(failure), context: context))
            }
        case "authorization_code":
            guard let code = form["code"] else { return .plain(fail(.body(.missing("code")), context: context)) }
            switch try await mock.authority.redeemAuthorizationCode(
                code, clientID: client.id, redirectURI: form["redirect_uri"], codeVerifier: form["code_verifier"])
            {
            case .success(let issued): return try await success(issued, context: context, mock: mock)
            case .failure(let failure): return .plain(fail(OAuth2Error.code(failure), context: context))
            }
        default:
            return .plain(fail(OAuth2Error.unsupportedGrantType, detail: grantType, context: context))
        }
    }

    private func success(_ issued: IssuedTokens, context: AuthmockRequestContext, mock: Authmock) async throws -> ClientAnswer {
        var issued = issued
        // An `id-token` fault rule: the id token says what the test wants the client to catch.
        if let claims = context.notes.idTokenClaims, let idToken = issued.idToken {
            issued.idToken = try await mock.authority.alteredIDToken(idToken, claims: claims)
        }
        return .issued(
            issued,
            JSONResponse.encode(
                TokenResponse(
                    accessToken: issued.accessToken, tokenType: "Bearer", expiresIn: issued.expiresIn,
                    refreshToken: issued.refreshToken, scope: issued.scope, idToken: issued.idToken)))
    }

    /// Requested scopes must all be allowed for the client; none requested
    /// means the client's default scopes. Nil when the request is not allowed.
    private func resolveScope(_ requested: String?, client: Client) -> String? {
        guard let requested else { return client.defaultScopes.joined(separator: " ") }
        let scopes = requested.split(separator: " ").map(String.init)
        guard scopes.allSatisfy(client.scopes.contains) else { return nil }
        return scopes.joined(separator: " ")
    }

    /// A form request whose client authenticated, or the refusal.
    enum FormRequest {
        case accepted(FormBody, Client)
        case refused(Response)
    }

    /// Reads the form parsed on arrival and authenticates the client (RFC
    /// 6749 section 2.3.1: HTTP Basic or `client_id`/`client_secret` in the
    /// body, not both).
    private func formRequest(_ request: Request, context: AuthmockRequestContext, mock: Authmock) -> FormRequest {
        // The media type itself, parameters (`; charset=UTF-8`) aside: not a prefix of it.
        if let type = request.headers[.contentType],
            type.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased() != "application/x-www-form-urlencoded"
        {
            return .refused(fail(OAuth2Error.unsupportedContentType, detail: type, context: context))
        }
        guard case .form(.success(let form)) = context.route.body else {
            return .refused(fail(OAuth2Error.malformedBody, context: context))
        }
        if let repeated = form.repeatedNames.first {
            return .refused(fail(OAuth2Error.repeatedParameter, detail: repeated, context: context))
        }
        let basicChallenge: HTTPFields = [.wwwAuthenticate: #"Basic realm="authmock""#]
        switch context.credential ?? PresentedCredential(request.headers) {
        case .basic(let id, let secret):
            if form["client_secret"] != nil { return .refused(fail(OAuth2Error.multipleClientAuth, context: context)) }
            guard let client = mock.directory.authenticateClient(id: id, secret: secret) else {
                return .refused(fail(OAuth2Error.invalidClientBasic, headers: basicChallenge, context: context))
            }
            return .accepted(form, client)
        case .other(scheme: "Basic"):
            return .refused(fail(OAuth2Error.invalidClientBasic, detail: "undecodable Basic credentials", headers: basicChallenge, context: context))
        default:
            guard let id = form["client_id"] else {
                return .refused(fail(OAuth2Error.invalidClient, detail: "no client authentication", context: context))
            }
            guard let client = mock.directory.authenticateClient(id: id, secret: form["client_secret"]) else {
                return .refused(fail(OAuth2Error.invalidClient, context: context))
            }
            return .accepted(form, client)
        }
    }

    // MARK: Authorization endpoint

    /// Auto-approves: signs in the user named by `login_hint`, or the first
    /// configured user, and redirects back with a one-time code.
    private func authorize(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async throws -> Response {
        let query = FormBody(query: request.uri.query)
        func param(_ name: String) -> String? { query[name] }
        guard let clientID = param("client_id"), let client = mock.directory.client(id: clientID) else {
            return fail(OAuth2Error.authorizeUnknownClient, context: context)
        }
        let redirect = param("redirect_uri") ?? (client.redirectURIs.count == 1 ? client.redirectURIs[0] : nil)
        guard let redirect, var target = URLComponents(string: redirect), target.scheme != nil,
            client.redirectURIs.isEmpty || client.redirectURIs.contains(redirect)
        else {
            return fail(OAuth2Error.authorizeBadRedirect, context: context)
        }
        func back(_ items: [URLQueryItem]) -> Response {
            target.queryItems = (target.queryItems ?? []) + items + (param("state").map { [URLQueryItem(name: "state", value: $0)] } ?? [])
            return Response(status: .found, headers: [.location: target.string ?? redirect, .cacheControl: "no-store"])
        }
        func backWithError(_ error: OAuth2Error) -> Response {
            context.notes.errorCode = error.row.code
            return back([URLQueryItem(name: "error", value: error.row.code), URLQueryItem(name: "error_description", value: error.row.message)])
        }
        guard param("response_type") == "code" else { return backWithError(.authorizeUnsupportedResponseType) }
        guard let challenge = param("code_challenge"), param("code_challenge_method") == "S256" else {
            return backWithError(.authorizePKCERequired)
        }
        guard let scope = resolveScope(param("scope"), client: client) else { return backWithError(.authorizeInvalidScope) }
        let user = param("login_hint").flatMap(mock.directory.user(named:)) ?? mock.directory.users.first ?? Directory.defaultUser
        let code = try await mock.authority.createAuthorizationCode(
            clientID: client.id, subject: user.username, scope: scope, redirectURI: param("redirect_uri"),
            codeChallenge: challenge, codeChallengeMethod: "S256", nonce: param("nonce"))
        return back([URLQueryItem(name: "code", value: code)])
    }

    // MARK: Metadata and introspection

    private func metadata(_ mock: Authmock, openID: Bool) -> Response {
        let base = mock.baseURL
        var document: [String: Any] = [
            "issuer": mock.authority.issuer,
            "authorization_endpoint": "\(base)/oauth/authorize",
            "token_endpoint": "\(base)/oauth/token",
            "revocation_endpoint": "\(base)/oauth/revoke",
            "introspection_endpoint": "\(base)/oauth/introspect",
            "grant_types_supported": ["password", "client_credentials", "refresh_token", "authorization_code"],
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "scopes_supported": Array(Set(mock.directory.clients.flatMap(\.scopes))).sorted(),
            "jwks_uri": base + OpenIDRoutes.jwks,
        ]
        if openID {
            document["userinfo_endpoint"] = base + OpenIDRoutes.userinfo
            document["end_session_endpoint"] = base + OpenIDRoutes.logout
            document["subject_types_supported"] = ["public"]
            document["id_token_signing_alg_values_supported"] = [mock.authority.keyRing.algorithm.rawValue]
            document["claims_supported"] = OpenIDRoutes.claimsSupported(mock.directory)
        }
        return JSONResponse.object(document)
    }

    private func introspection(_ result: Introspection, issuer: String) -> Response {
        switch result {
        case .inactive:
            return JSONResponse.object(["active": false])
        case .access(let grant):
            let c = grant.claims
            return JSONResponse.object([
                "active": true, "token_type": "access_token", "scope": c.scope, "client_id": c.clientID,
                "username": c.sub.value, "sub": c.sub.value, "aud": c.aud?.value ?? [], "iss": c.iss.value,
                "exp": Int(c.exp.value.timeIntervalSince1970), "iat": Int(c.iat.value.timeIntervalSince1970), "jti": c.jti.value,
            ])
        case .refresh(let info):
            return JSONResponse.object([
                "active": true, "token_type": "refresh_token", "scope": info.scope, "client_id": info.clientID,
                "username": info.subject, "sub": info.subject, "iss": issuer,
                "exp": Int(info.expiresAt.timeIntervalSince1970),
            ])
        }
    }

    struct TokenResponse: Encodable {
        var accessToken: String, tokenType: String, expiresIn: Int, refreshToken: String?, scope: String, idToken: String?
        enum CodingKeys: String, CodingKey {
            case scope
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in", refreshToken = "refresh_token"
            case idToken = "id_token"
        }
    }
}
