public import AuthmockCore
public import AuthmockModel
public import DriverProtocol
public import HTTPTypes

/// Every refusal, failure and body problem a dialect can answer, in words no
/// dialect owns. Routes, the token core and the request pipeline say what
/// happened; each dialect maps the situation to its documented answer
/// (`Dialect.answer(to:)`), so a dialect is one table from situations to rows.
/// The oauth2 dialect's grant-specific errors (client authentication,
/// authorization codes, the authorization endpoint) stay in its own catalog:
/// no other dialect has those requests.
public enum Situation: Error, Sendable, Equatable {
    // Any request.
    /// No route serves the method and path.
    case notFound(method: String, path: String)
    /// A dialect's own endpoint called with a method it does not take.
    case methodNotAllowed(method: String, path: String)
    /// A request at a dialect's endpoint's method and path that its `match`
    /// fits no endpoint of (another grant type, an `AuthFlow` it does not know).
    case requestUnmatched(method: String, path: String)
    /// A chunked body with broken framing, or an unknown `Transfer-Encoding`.
    case malformedFraming(String)
    /// The body is over `--max-body`; the text says by how much.
    case payloadTooLarge(String)
    /// The `--state` database failed or did not answer in time.
    case storeUnavailable
    /// A bug in authmock.
    case internalError

    // A sign-in or refresh request's body (JSON fields, form parameters).
    case body(JSONFields.Problem)

    // Sign-in.
    case wrongCredentials
    /// A sign-in naming no user, where the backend says so (`unknown_user: reveal`).
    case unknownUser
    /// A sign-in or refresh naming a client the server does not know (a dialect's `client_id` field).
    case unknownClient(String)

    // Refresh, at a refresh endpoint or (header rotation) on a resource.
    case refreshToken(RefreshTokenFailure)
    /// A refresh token not of the backend's shape (`refresh.refresh_token_pattern`),
    /// refused before any lookup as GoTrue refuses one.
    case refreshTokenMalformed
    /// An access token sent where the refresh token belongs.
    case accessTokenAsRefreshToken
    /// A refresh that sends the access token too: it is not ours, of another
    /// login than the refresh token, or the Bearer copy differs from the body's.
    case accessTokenMismatch(AccessTokenMismatch)
    /// A refresh that must carry the old access token as Bearer, without it.
    case bearerMissing

    // A protected resource.
    /// `Authorization` missing, or in a scheme other than Bearer.
    case noAccessToken(notBearer: Bool)
    case accessToken(AccessTokenFailure)
    /// A refresh token where an access token belongs.
    case refreshTokenAsAccessToken
    case insufficientScope(required: String)
}

/// Why the access token sent with a refresh does not go with its refresh token.
public enum AccessTokenMismatch: Sendable, Equatable {
    /// Not a JWT signed by this server.
    case notOurs
    /// Of another login (family) than the refresh token.
    case otherLogin
    /// The access token's two copies (a Bearer header and a body field) differ.
    case bearerDiffers
}

/// A dialect's answer to a situation: one documented row, the detail said
/// after its message, headers (challenges), and the status, which a setting
/// such as `refresh_failure_status` may put in place of the row's.
public struct ErrorAnswer: Sendable {
    public var row: ErrorRow
    public var detail: String?
    public var headers: HTTPFields
    public var status: Int
    /// A dialect file's own body for this answer, in place of its `errors.body`.
    public var body: Template?

    public init(_ row: ErrorRow, detail: String? = nil, headers: HTTPFields = [:], status: Int? = nil, body: Template? = nil) {
        self.row = row
        self.detail = detail
        self.headers = headers
        self.status = status ?? row.status
        self.body = body
    }

    public init(_ error: some ErrorCatalog, detail: String? = nil, headers: HTTPFields = [:], status: Int? = nil) {
        self.init(error.row, detail: detail, headers: headers, status: status)
    }
}

extension Situation {
    /// The shared rows (`CommonError`) for the request-level situations
    /// (not found, framing, size, store, bug), which every dialect but
    /// a dialect file that names none answers alike.
    var commonAnswer: ErrorAnswer {
        switch self {
        case .notFound, .methodNotAllowed, .requestUnmatched: ErrorAnswer(CommonError.notFound, detail: detail)
        case .malformedFraming: ErrorAnswer(CommonError.malformedFraming, detail: detail)
        case .payloadTooLarge: ErrorAnswer(CommonError.payloadTooLarge, detail: detail)
        case .storeUnavailable: ErrorAnswer(CommonError.storeUnavailable)
        default: ErrorAnswer(CommonError.internalError)
        }
    }

    /// The words said after a situation's message where a dialect says any:
    /// the request that found no route, by how much a body was too large,
    /// which field a body lacks, the scope a token lacks.
    var detail: String? {
        switch self {
        case .notFound(let method, let path), .methodNotAllowed(let method, let path), .requestUnmatched(let method, let path): "\(method) \(path)"
        case .malformedFraming(let text), .payloadTooLarge(let text): text
        case .body(.malformed): nil
        case .body(.notAnObject): "the body must be a JSON object"
        case .body(.missing(let name)): name
        case .body(.wrongType(let name)): "\(name) must be a string"
        case .body(.unsupportedMediaType(let type)): type
        case .insufficientScope(let scope): "needs \(scope)"
        case .unknownClient(let id): id
        case .accessTokenMismatch(.notOurs): "the access token is not signed by this server"
        case .accessTokenMismatch(.bearerDiffers): "the two copies of the access token differ"
        default: nil
        }
    }
}

extension Situation {
    /// One of each situation, for checks that every dialect answers each with
    /// one of its documented rows.
    public static var examples: [Situation] {
        [
            .notFound(method: "GET", path: "/nowhere"), .methodNotAllowed(method: "GET", path: "/auth/login"),
            .requestUnmatched(method: "POST", path: "/"),
            .malformedFraming("bad chunk size"), .payloadTooLarge("limit 65536 bytes"), .storeUnavailable, .internalError,
            .body(.malformed), .body(.notAnObject), .body(.missing("refreshToken")), .body(.wrongType("refreshToken")),
            .body(.unsupportedMediaType("text/plain")),
            .wrongCredentials, .unknownUser, .unknownClient("nobody"), .refreshTokenMalformed, .accessTokenAsRefreshToken, .bearerMissing,
            .accessTokenMismatch(.notOurs), .accessTokenMismatch(.otherLogin), .accessTokenMismatch(.bearerDiffers),
            .noAccessToken(notBearer: false), .noAccessToken(notBearer: true), .refreshTokenAsAccessToken,
            .insufficientScope(required: "write"),
        ]
            + RefreshTokenFailure.allCases.map { .refreshToken($0) }
            + AccessTokenFailure.allCases.map { .accessToken($0) }
    }
}

extension Situation {
    /// The situation's name in a dialect file's `errors.answers`
    /// (docs/dialects.md), the same whichever dialect meets it.
    public var key: String {
        switch self {
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .requestUnmatched: "request_unmatched"
        case .malformedFraming: "malformed_framing"
        case .payloadTooLarge: "payload_too_large"
        case .storeUnavailable: "store_unavailable"
        case .internalError: "internal_error"
        case .body(.malformed): "body_malformed"
        case .body(.notAnObject): "body_not_an_object"
        case .body(.missing): "field_missing"
        case .body(.wrongType): "field_wrong_type"
        case .body(.unsupportedMediaType): "unsupported_media_type"
        case .wrongCredentials: "wrong_credentials"
        case .unknownUser: "user_unknown"
        case .unknownClient: "client_unknown"
        case .refreshToken(.clientMismatch): "refresh_token_of_another_client"
        case .refreshToken(let failure): "refresh_token_\(failure.rawValue)"
        case .refreshTokenMalformed: "refresh_token_malformed"
        case .accessTokenAsRefreshToken: "access_token_as_refresh_token"
        case .accessTokenMismatch: "access_token_mismatch"
        case .bearerMissing: "access_token_missing_on_refresh"
        case .noAccessToken, .accessToken(.missing): "access_token_missing"
        case .accessToken(let failure): "access_token_\(failure.rawValue)"
        case .refreshTokenAsAccessToken: "refresh_token_as_access_token"
        case .insufficientScope: "insufficient_scope"
        }
    }

    /// The group a dialect file may answer the situation with when it does
    /// not name it: every refused refresh, every refused access token, every
    /// bad body; nil for the request-level situations, which have shared
    /// answers (`CommonError`) unless the file names them.
    public var group: String? {
        switch self {
        case .notFound, .methodNotAllowed, .requestUnmatched, .malformedFraming, .payloadTooLarge, .storeUnavailable, .internalError: nil
        case .body: "bad_request"
        case .wrongCredentials, .unknownUser, .unknownClient: nil
        case .refreshToken, .refreshTokenMalformed, .accessTokenAsRefreshToken, .accessTokenMismatch, .bearerMissing: "refresh_refused"
        case .noAccessToken, .accessToken, .refreshTokenAsAccessToken, .insufficientScope: "access_refused"
        }
    }

    /// The situation a dialect file's `errors.answers` key names (not a
    /// group's key): what a fault rule's `answer` action answers as.
    public static func named(_ key: String) -> Situation? {
        examples.first { $0.key == key }
    }

    /// The situation keys a fault rule's `answer` may name.
    public static var answerableKeys: [String] {
        var seen = Set<String>()
        return examples.map(\.key).filter { seen.insert($0).inserted }
    }

    /// Every key and group a dialect file's `errors.answers` may name, with what it covers.
    public static let answerKeys: [(key: String, doc: String)] = [
        ("bad_request", "group: any body problem below (required unless each is named)"),
        ("body_malformed", "the body does not parse as its encoding (JSON or form)"),
        ("body_not_an_object", "a JSON body that is not an object"),
        ("field_missing", "a required field or parameter is absent or empty; the message names it"),
        ("field_wrong_type", "a field that is not a string"),
        ("unsupported_media_type", "a body whose `Content-Type` the endpoint does not read, under `other_content_types: refuse`"),
        ("wrong_credentials", "sign-in with a username and password that match no user (required)"),
        (
            "user_unknown",
            "sign-in with a user name no user has, under `unknown_user: reveal`; "
                + "default: as wrong_credentials"
        ),
        (
            "client_unknown",
            "a sign-in or refresh naming a client the server does not know (required where the file names `client_id`; else as wrong_credentials)"
        ),
        ("refresh_refused", "group: any refused refresh below (required unless each is named)"),
        ("refresh_token_unknown", "a refresh token this server never issued"),
        (
            "refresh_token_malformed",
            "a refresh token not of the shape `refresh.refresh_token_pattern` gives, refused before any lookup; default: as refresh_token_unknown"
        ),
        ("refresh_token_expired", "a refresh token past its lifetime"),
        ("refresh_token_revoked", "a refresh token revoked, or its login revoked"),
        ("refresh_token_reused", "an already rotated refresh token, after the reuse grace: the login is revoked"),
        ("refresh_token_of_another_client", "a refresh token issued to another client"),
        ("access_token_as_refresh_token", "an access token where the refresh token belongs"),
        ("access_token_mismatch", "the access token sent with a refresh is not ours or of another login"),
        ("access_token_missing_on_refresh", "a refresh that must carry the access token, without it"),
        ("access_refused", "group: any refused resource request below (required unless each is named)"),
        ("access_token_missing", "no `Authorization: Bearer` token on a resource"),
        ("access_token_malformed", "not a JWT"),
        ("access_token_wrong_algorithm", "a JWT whose `alg` is not the server's (`none` included)"),
        ("access_token_bad_signature", "forged or tampered"),
        ("access_token_wrong_audience", "`aud` is not this server's"),
        ("access_token_wrong_issuer", "`iss` is not this server's"),
        ("access_token_not_yet_valid", "`nbf` or `iat` ahead of the server clock"),
        ("access_token_expired", "`exp` at or before the server clock: the answer a client refreshes on"),
        ("access_token_revoked", "revoked directly or through its login"),
        ("refresh_token_as_access_token", "a refresh token sent as the Bearer token"),
        ("insufficient_scope", "the token lacks the scope the resource needs"),
        ("not_found", "no route serves the path (default: the shared `not_found` row, 404)"),
        ("method_not_allowed", "a sign-in or refresh path with another method (default: as not_found)"),
        (
            "request_unmatched",
            "a request at a sign-in or refresh endpoint's method and path whose `match` fits none there: another grant type or flow (default: as not_found)"
        ),
        ("malformed_framing", "a request head that cannot be parsed, or broken chunked framing (default: the shared 400 row)"),
        ("payload_too_large", "a body over `--max-body` (default: the shared 413 row)"),
        ("store_unavailable", "the `--state` database failed (default: the shared 503 row)"),
        ("internal_error", "a bug in authmock (default: the shared 500 row)"),
    ]
}

extension FaultRule {
    /// The rule, when what it names is the server's to know: an `answer`
    /// names a situation there is (its key in a dialect file's `errors.answers`).
    public func checkedSituation() throws(ControlInputError) -> FaultRule {
        if case .answer(let key) = action, Situation.named(key) == nil {
            let keys = Situation.answerableKeys
            throw ControlInputError(
                .invalidValue,
                "field 'action.situation' must be a situation a dialect answers (\(keys.joined(separator: ", "))); got '\(key)'\(Suggestion.hint(for: key, in: keys))"
            )
        }
        return self
    }
}
