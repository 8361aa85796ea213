public import AuthmockCore
public import HTTPTypes

/// Every refusal, failure and body problem a dialect can answer, in words no
/// dialect owns. Routes, the token core and the request pipeline say what
/// happened; each dialect maps the situation to its documented answer
/// (`Profile.answer(to:)`), so a dialect is one table from situations to rows.
/// The oauth2 profile's grant-specific errors (client authentication,
/// authorization codes, the authorization endpoint) stay in its own catalog:
/// no other dialect has those requests.
public enum Situation: Error, Sendable, Equatable {
    // Any request.
    /// No route serves the method and path.
    case notFound(method: String, path: String)
    /// A dialect's own endpoint called with a method it does not take.
    case methodNotAllowed(method: String, path: String)
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

    // Refresh, at a refresh endpoint or (header rotation) on a resource.
    case refreshToken(RefreshTokenFailure)
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
    /// The Bearer token and the body's `accessToken` differ.
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

    public init(_ row: ErrorRow, detail: String? = nil, headers: HTTPFields = [:], status: Int? = nil) {
        self.row = row
        self.detail = detail
        self.headers = headers
        self.status = status ?? row.status
    }

    public init(_ error: some ErrorCatalog, detail: String? = nil, headers: HTTPFields = [:], status: Int? = nil) {
        self.init(error.row, detail: detail, headers: headers, status: status)
    }
}

extension Situation {
    /// The shared rows (`CommonError`) for the request-level situations
    /// (not found, framing, size, store, bug), which every dialect but
    /// envelope answers alike.
    var commonAnswer: ErrorAnswer {
        switch self {
        case .notFound(let method, let path), .methodNotAllowed(let method, let path): ErrorAnswer(CommonError.notFound, detail: "\(method) \(path)")
        case .malformedFraming(let detail): ErrorAnswer(CommonError.malformedFraming, detail: detail)
        case .payloadTooLarge(let detail): ErrorAnswer(CommonError.payloadTooLarge, detail: detail)
        case .storeUnavailable: ErrorAnswer(CommonError.storeUnavailable)
        default: ErrorAnswer(CommonError.internalError)
        }
    }

    /// The words every dialect says after a body problem's message.
    var bodyDetail: String? {
        switch self {
        case .body(.malformed): nil
        case .body(.notAnObject): "the body must be a JSON object"
        case .body(.missing(let name)): name
        case .body(.wrongType(let name)): "\(name) must be a string"
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
            .malformedFraming("bad chunk size"), .payloadTooLarge("limit 65536 bytes"), .storeUnavailable, .internalError,
            .body(.malformed), .body(.notAnObject), .body(.missing("refreshToken")), .body(.wrongType("refreshToken")),
            .wrongCredentials, .accessTokenAsRefreshToken, .bearerMissing,
            .accessTokenMismatch(.notOurs), .accessTokenMismatch(.otherLogin), .accessTokenMismatch(.bearerDiffers),
            .noAccessToken(notBearer: false), .noAccessToken(notBearer: true), .refreshTokenAsAccessToken,
            .insufficientScope(required: "write"),
        ]
            + RefreshTokenFailure.allCases.map { .refreshToken($0) }
            + AccessTokenFailure.allCases.map { .accessToken($0) }
    }
}
