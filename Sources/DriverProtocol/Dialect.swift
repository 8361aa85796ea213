import Foundation

/// A dialect described as data: a team's own backend, written as a dialect
/// file (docs/dialects.md). It says where sign-in and refresh live, where the
/// tokens travel and what every answer looks like. The server serves it
/// (`DeclaredDialect`), and the runner hands it to drivers in `hello`
/// (`dialect`, driver-protocol.md), so a client can be configured from it.
/// Its JSON is the dialect file's own shape with every default filled in.
public struct DialectDescription: Sendable, Codable, Equatable {
    public var name: String
    public var summary: String
    public var signIn: SignIn
    public var refresh: Refresh
    /// The answer to a sign-in or refresh that issued tokens.
    public var tokens: AnswerTemplate
    public var errors: Errors
    /// The body of every successful resource answer around the resource's
    /// own JSON (`{data}`), for backends that wrap every answer; nil: as it is.
    public var resources: Template?
    /// The backend's JWTs where they differ from authmock's (nil: as they are).
    public var jwt: JWTShape?
    /// Fixed JSON answers to GET by path (an OpenID Connect discovery
    /// document where the backend's SDK reads one first); nil: none.
    public var documents: [String: Template]?
    /// How the API reads `Authorization`'s scheme: `exact` takes only
    /// `Bearer` as written (a backend that compares the scheme's bytes:
    /// `bearer` is no credential); nil: any case (RFC 9110).
    public var bearerScheme: BearerScheme?
    /// The backend's sign-out (token revocation) endpoint; nil: it has none,
    /// and a client signs out by forgetting its tokens.
    public var signOut: SignOut?
    /// What the backend does with a body whose `Content-Type` is neither an
    /// endpoint's `encoding` nor its `also_accepts`; nil: reads it as `encoding`.
    public var otherContentTypes: OtherContentTypes?
    /// The body field of sign-in and refresh requests that names the app
    /// client (`ClientId`): tokens go to that client, one the
    /// server does not know is refused. nil: the backend names none, and
    /// tokens go to the first configured client.
    public var clientID: String?
    /// What tells a client its access token needs refreshing: any answer of
    /// the expired answer's status, or only its code. nil: the code where
    /// another refusal of an access token shares that status, else the status
    /// (`signalsExpiryByCode`).
    public var refreshOn: RefreshSignal?

    public enum RefreshSignal: String, Sendable, Codable, Equatable, CaseIterable {
        /// Any answer of the expired answer's status (a revoked token's 401 too).
        case status
        /// Only the expired answer's code (40101, not 40102).
        case code
    }

    public enum BearerScheme: String, Sendable, Codable, Equatable { case exact }

    public enum OtherContentTypes: String, Sendable, Codable, Equatable, CaseIterable {
        /// Read as the endpoint's encoding (a server that decodes any body as JSON).
        case read
        /// Refused: the `unsupported_media_type` answer (a 415).
        case refuse
    }

    enum CodingKeys: String, CodingKey {
        case name = "dialect", summary, signIn = "sign_in", refresh, tokens, errors, resources, jwt, documents
        case bearerScheme = "bearer_scheme", signOut = "sign_out", otherContentTypes = "other_content_types", clientID = "client_id"
        case refreshOn = "refresh_on"
    }

    public init(
        name: String, summary: String, signIn: SignIn, refresh: Refresh, tokens: AnswerTemplate, errors: Errors, resources: Template? = nil,
        jwt: JWTShape? = nil, documents: [String: Template]? = nil, bearerScheme: BearerScheme? = nil, signOut: SignOut? = nil,
        otherContentTypes: OtherContentTypes? = nil, clientID: String? = nil, refreshOn: RefreshSignal? = nil
    ) {
        self.refreshOn = refreshOn
        self.clientID = clientID
        self.otherContentTypes = otherContentTypes
        self.signOut = signOut
        self.name = name
        self.summary = summary
        self.signIn = signIn
        self.refresh = refresh
        self.tokens = tokens
        self.errors = errors
        self.resources = resources
        self.jwt = jwt
        self.documents = documents
        self.bearerScheme = bearerScheme
    }

    /// A backend's JWTs (`jwt:`): an issuer that is the user pool's URL,
    /// its access tokens carry `token_use` and no `aud`, and every sign-in
    /// and refresh brings an id token whose `aud` is the client.
    public struct JWTShape: Sendable, Codable, Equatable {
        /// Appended to the server's URL in `iss`; the JWKS is served at `iss` + `/.well-known/jwks.json` too.
        public var issuerPath: String
        /// Standard claims access tokens leave out: `aud` (then resources do
        /// not require it) and `nbf`, which some backends' tokens do not carry.
        public var accessLeftOut: [String]
        public var accessAudience: Bool { !accessLeftOut.contains("aud") }
        public var accessNotBefore: Bool { !accessLeftOut.contains("nbf") }
        /// Claims added to every access token; `{user}` and `{client_id}` are replaced.
        public var accessClaims: [String: String]
        /// Claims of the id token issued beside every access token, `{user}`
        /// and `{client_id}` replaced (nil: no id token).
        public var idTokenClaims: [String: String]?
        /// Where the JWKS is served, where the vendor publishes it elsewhere
        /// than `iss` + `/.well-known/jwks.json`
        /// (`.../protocol/openid-connect/certs`); nil: there.
        public var jwksPath: String?
        /// Given: refresh tokens are JWTs (HS512 with a key of the server's
        /// own) carrying these claims beside `exp`, `iat`,
        /// `jti`, `iss`, `aud`, `sub`, `sid`, `azp` and `scope`; `{user}` and
        /// `{client_id}` are replaced. nil: opaque refresh tokens.
        public var refreshClaims: [String: String]?

        /// The path the JWKS is served at: `jwks_path`, else under the issuer path; nil: only where every dialect serves it.
        public var servedJWKSPath: String? { jwksPath ?? (issuerPath.isEmpty ? nil : issuerPath + "/.well-known/jwks.json") }

        enum CodingKeys: String, CodingKey {
            case issuerPath = "issuer_path", accessLeftOut = "access_left_out", accessClaims = "access_claims", idTokenClaims = "id_token_claims"
            case jwksPath = "jwks_path", refreshClaims = "refresh_claims"
        }

        public init(
            issuerPath: String = "", accessLeftOut: [String] = [], accessClaims: [String: String] = [:], idTokenClaims: [String: String]? = nil,
            jwksPath: String? = nil, refreshClaims: [String: String]? = nil
        ) {
            self.jwksPath = jwksPath
            self.refreshClaims = refreshClaims
            self.issuerPath = issuerPath
            self.accessLeftOut = accessLeftOut
            self.accessClaims = accessClaims
            self.idTokenClaims = idTokenClaims
        }
    }

    /// What tells an endpoint's requests apart from another's on the same
    /// method and path: query parameters (a grant type), headers (a JSON 1.1
    /// target) and body fields, each with the value it must have. A client
    /// sends them; the server classifies by them.
    public struct Match: Sendable, Codable, Equatable {
        public var query: [String: String]
        public var headers: [String: String]
        public var body: [String: String]

        public init(query: [String: String] = [:], headers: [String: String] = [:], body: [String: String] = [:]) {
            self.query = query
            self.headers = headers
            self.body = body
        }

        public var isEmpty: Bool { query.isEmpty && headers.isEmpty && body.isEmpty }
    }

    public enum BodyEncoding: String, Sendable, Codable, CaseIterable {
        /// A JSON object; fields may be nested (`auth.username`).
        case json
        /// `application/x-www-form-urlencoded`.
        case form
    }

    public struct SignIn: Sendable, Codable, Equatable {
        public var method: String
        public var path: String
        public var match: Match
        public var encoding: BodyEncoding
        /// Another body the server reads too, told apart by `Content-Type`
        /// (nil: `encoding` only). A client sends `encoding`.
        public var alsoAccepts: BodyEncoding?
        /// The fields holding the user name and the password.
        public var username: String
        public var password: String
        /// The user name of the account a server starts with, where the
        /// backend's user names have a shape of their own (an email for
        /// a sign-in by email); nil: `alice`.
        public var defaultUser: String?

        enum CodingKeys: String, CodingKey {
            case method, path, match, encoding, alsoAccepts = "also_accepts", username, password, defaultUser = "default_user"
        }

        public init(
            method: String, path: String, match: Match = Match(), encoding: BodyEncoding, alsoAccepts: BodyEncoding? = nil, username: String,
            password: String, defaultUser: String? = nil
        ) {
            self.defaultUser = defaultUser
            self.method = method
            self.path = path
            self.match = match
            self.encoding = encoding
            self.alsoAccepts = alsoAccepts
            self.username = username
            self.password = password
        }
    }

    /// A sign-out endpoint: the request that names a login by one of its
    /// tokens (the refresh token, or the access token) and ends it at the
    /// server, so neither token works again (a `/logout`, RFC 7009's
    /// `/oauth/revoke`).
    public struct SignOut: Sendable, Codable, Equatable {
        public var method: String
        public var path: String
        public var match: Match
        public var encoding: BodyEncoding
        /// Where the refresh token travels; nil: the access token names the login.
        public var refreshToken: TokenLocation?
        /// Where the access token travels, when it names the login.
        public var accessToken: TokenLocation?
        /// The answer's status (204, or 200 with `body`).
        public var status: Int
        /// The answer's JSON body; nil: none.
        public var body: Template?
        /// Headers the answer carries (a JSON 1.1 `Content-Type`).
        public var headers: [String: Template]
        /// True: a refresh token that is no longer good gets the refresh
        /// refusal for why (a blacklist view that validates it first);
        /// false: a success, as RFC 7009 asks.
        public var refusesDeadToken: Bool

        enum CodingKeys: String, CodingKey {
            case method, path, match, encoding, refreshToken = "refresh_token", accessToken = "access_token", status, body, headers
            case refusesDeadToken = "refuses_dead_token"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            method = try c.decode(String.self, forKey: .method)
            path = try c.decode(String.self, forKey: .path)
            match = try c.decodeIfPresent(Match.self, forKey: .match) ?? Match()
            encoding = try c.decodeIfPresent(BodyEncoding.self, forKey: .encoding) ?? .json
            refreshToken = try c.decodeIfPresent(TokenLocation.self, forKey: .refreshToken)
            accessToken = try c.decodeIfPresent(TokenLocation.self, forKey: .accessToken)
            status = try c.decodeIfPresent(Int.self, forKey: .status) ?? 204
            body = try c.decodeIfPresent(Template.self, forKey: .body)
            headers = try c.decodeIfPresent([String: Template].self, forKey: .headers) ?? [:]
            refusesDeadToken = try c.decodeIfPresent(Bool.self, forKey: .refusesDeadToken) ?? false
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(method, forKey: .method)
            try c.encode(path, forKey: .path)
            try c.encode(match, forKey: .match)
            try c.encode(encoding, forKey: .encoding)
            try c.encodeIfPresent(refreshToken, forKey: .refreshToken)
            try c.encodeIfPresent(accessToken, forKey: .accessToken)
            try c.encode(status, forKey: .status)
            try c.encodeIfPresent(body, forKey: .body)
            try c.encode(headers, forKey: .headers)
            // Left out when false: a driver's dialect as before, and the embedded files unchanged.
            if refusesDeadToken { try c.encode(true, forKey: .refusesDeadToken) }
        }

        public init(
            method: String, path: String, match: Match = Match(), encoding: BodyEncoding, refreshToken: TokenLocation?, accessToken: TokenLocation?,
            status: Int, body: Template?, headers: [String: Template] = [:], refusesDeadToken: Bool = false
        ) {
            self.refusesDeadToken = refusesDeadToken
            self.headers = headers
            self.method = method
            self.path = path
            self.match = match
            self.encoding = encoding
            self.refreshToken = refreshToken
            self.accessToken = accessToken
            self.status = status
            self.body = body
        }
    }

    public struct Refresh: Sendable, Codable, Equatable {
        public var method: String
        public var path: String
        public var match: Match
        public var encoding: BodyEncoding
        /// Another body the server reads too, told apart by `Content-Type`
        /// (nil: `encoding` only). A client sends `encoding`.
        public var alsoAccepts: BodyEncoding?
        public var refreshToken: TokenLocation
        /// Set when the refresh carries the (possibly expired) access token too.
        public var accessToken: TokenLocation?
        /// A second place the same access token travels (a Bearer header
        /// beside a body field); the two must be the same token.
        public var accessTokenCopy: TokenLocation?
        /// The refresh's own answer where it differs from sign-in's (`tokens`).
        public var tokens: AnswerTemplate?
        /// What `{refresh_token}` says when rotation is off; nil: left out.
        public var unrotatedRefreshToken: UnrotatedRefreshToken?
        /// A regular expression every refresh token of the backend's matches
        /// whole; one that does not is refused before any lookup
        /// (`refresh_token_malformed`). nil: any value is looked up.
        public var refreshTokenPattern: String?
        /// `resources`: no refresh endpoint (`method` and `path` are empty);
        /// the refresh token rides on an ordinary request in place of the
        /// access token. nil: an endpoint.
        public var via: Via?
        /// With `via: resources`, the response header that carries the new
        /// access token (nil: `Authorization` with `Bearer`).
        public var renewedAccessToken: TokenLocation?

        enum CodingKeys: String, CodingKey {
            case method, path, match, encoding, alsoAccepts = "also_accepts", refreshToken = "refresh_token", accessToken = "access_token",
                accessTokenCopy = "access_token_copy"
            case tokens, unrotatedRefreshToken = "unrotated_refresh_token", via, renewedAccessToken = "renewed_access_token"
            case refreshTokenPattern = "refresh_token_pattern"
        }

        /// Where a refresh happens.
        public enum Via: String, Sendable, Codable, CaseIterable {
            /// A request of its own to the refresh endpoint.
            case endpoint
            /// Any resource request, presenting the refresh token where the
            /// access token goes; its answer carries a new access token.
            case resources
        }

        /// Whether the refresh token rides on resource requests (no endpoint).
        public var onResources: Bool { via == .resources }

        /// The response header of a renewed access token and its scheme.
        public var renewedHeader: (name: String, scheme: String?) {
            if case .header(let name, let scheme)? = renewedAccessToken { return (name, scheme) }
            return ("Authorization", "Bearer")
        }

        public init(
            method: String, path: String, match: Match = Match(), encoding: BodyEncoding, alsoAccepts: BodyEncoding? = nil,
            refreshToken: TokenLocation,
            accessToken: TokenLocation?,
            accessTokenCopy: TokenLocation? = nil, tokens: AnswerTemplate? = nil, unrotatedRefreshToken: UnrotatedRefreshToken? = nil,
            via: Via? = nil, renewedAccessToken: TokenLocation? = nil, refreshTokenPattern: String? = nil
        ) {
            self.refreshTokenPattern = refreshTokenPattern
            self.via = via
            self.renewedAccessToken = renewedAccessToken
            self.method = method
            self.path = path
            self.match = match
            self.encoding = encoding
            self.alsoAccepts = alsoAccepts
            self.refreshToken = refreshToken
            self.accessToken = accessToken
            self.accessTokenCopy = accessTokenCopy
            self.tokens = tokens
            self.unrotatedRefreshToken = unrotatedRefreshToken
        }
    }

    /// A refresh answer's `{refresh_token}` when the server does not rotate.
    public enum UnrotatedRefreshToken: String, Sendable, Codable, CaseIterable {
        /// Its member is left out: the client keeps the one it has.
        case leftOut = "left_out"
        /// The refresh token the client sent, said again.
        case repeated
    }

    /// Where a token travels in a request: `{"field": NAME}`, `{"header":
    /// NAME, "scheme": WORD}`, `{"cookie": NAME}` or `{"query": NAME}`.
    public enum TokenLocation: Sendable, Codable, Equatable {
        /// A body field (a dotted path in a JSON body).
        case field(String)
        /// A header, its value after `scheme ` when a scheme is given.
        case header(String, scheme: String?)
        case cookie(String)
        /// A query parameter of the request's URL.
        case query(String)

        enum CodingKeys: String, CodingKey { case field, header, scheme, cookie, query }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if let name = try c.decodeIfPresent(String.self, forKey: .field) {
                self = .field(name)
            } else if let name = try c.decodeIfPresent(String.self, forKey: .header) {
                self = .header(name, scheme: try c.decodeIfPresent(String.self, forKey: .scheme))
            } else if let name = try c.decodeIfPresent(String.self, forKey: .query) {
                self = .query(name)
            } else {
                self = .cookie(try c.decode(String.self, forKey: .cookie))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .field(let name): try c.encode(name, forKey: .field)
            case .header(let name, let scheme):
                try c.encode(name, forKey: .header)
                try c.encodeIfPresent(scheme, forKey: .scheme)
            case .cookie(let name): try c.encode(name, forKey: .cookie)
            case .query(let name): try c.encode(name, forKey: .query)
            }
        }
    }

    /// A success answer: status, headers and body, each a template.
    public struct AnswerTemplate: Sendable, Codable, Equatable {
        public var status: Int
        public var headers: [String: Template]
        public var body: Template

        public init(status: Int, headers: [String: Template], body: Template) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    public struct Errors: Sendable, Codable, Equatable {
        /// The body of every error answer (`{code}`, `{message}`, `{status}`).
        public var body: Template
        /// Answers by situation key or group (docs/dialects.md).
        public var answers: [String: DeclaredError]

        public init(body: Template, answers: [String: DeclaredError]) {
            self.body = body
            self.answers = answers
        }
    }

    /// One documented error of the dialect.
    public struct DeclaredError: Sendable, Codable, Equatable {
        public var status: Int
        /// Said as `{code}`: a string or a number, as the file wrote it.
        public var code: JSONValue
        public var message: String
        public var headers: [String: Template]
        /// Said after the message in place of the situation's own detail; empty: nothing said.
        public var detail: String?
        /// When the backend answers this, for the error reference.
        public var when: String?
        /// This answer's own body, in place of `errors.body` (a backend whose
        /// errors differ in shape: DRF's resource 401s list `messages`).
        public var body: Template?

        public init(
            status: Int, code: JSONValue, message: String, headers: [String: Template], detail: String? = nil, when: String? = nil,
            body: Template? = nil
        ) {
            self.status = status
            self.code = code
            self.message = message
            self.headers = headers
            self.detail = detail
            self.when = when
            self.body = body
        }
    }
}

extension DialectDescription {
    /// The answer an expired access token gets: by its own key, else its group's.
    public var expiredAnswer: DeclaredError? { errors.answers["access_token_expired"] ?? errors.answers["access_refused"] }

    /// A revoked access token gets the expired answer's status with another
    /// code: only the code says "do not refresh" (40102 beside 40101).
    public var tellsRevokedFromExpiredByCode: Bool {
        guard let expired = expiredAnswer, let revoked = errors.answers["access_token_revoked"] ?? errors.answers["access_refused"] else {
            return false
        }
        return revoked.status == expired.status && revoked.code != expired.code
    }

    /// Whether a client must read the code to know its token expired: the
    /// file says so (`refresh_on`), or else another refusal of an access
    /// token (revoked, forged, missing) shares the expired answer's status
    /// but not its code (40101 beside 40102).
    public var signalsExpiryByCode: Bool {
        if let refreshOn { return refreshOn == .code }
        guard let expired = expiredAnswer else { return false }
        let others = ["access_token_revoked", "access_token_bad_signature", "access_token_malformed", "access_token_missing"]
        return others.contains { key in
            guard let other = errors.answers[key] ?? errors.answers["access_refused"] else { return false }
            return other.status == expired.status && other.code != expired.code
        }
    }

    /// Where an error answer says its code (`{code}` in `errors.body`), as keys.
    public var codePath: [String]? { errors.body.path(to: .code) }
}
