public import AuthmockCore
public import AuthmockModel
import Foundation
public import DriverProtocol

/// One documented error: what the server answers and when. `authmock errors`
/// and `docs/errors.md` are generated from these rows, and every error a
/// dialect emits is built from a row, so the docs cannot drift from the wire.
public struct ErrorRow: Sendable, Hashable {
    /// Dialect the row belongs to, or `all` for rows every dialect shares.
    public let profile: String
    public let status: Int
    /// The machine-readable code the client sees (`error` field, or a number).
    public let code: String
    /// The human-readable text sent with it (`error_description`, `message`).
    public let message: String
    /// When the server answers this.
    public let when: String

    public init(profile: String, status: Int, code: String, message: String, when: String) {
        self.profile = profile
        self.status = status
        self.code = code
        self.message = message
        self.when = when
    }
}

/// A dialect's errors: an enum whose cases are its documented errors.
public protocol ErrorCatalog: CaseIterable, Sendable {
    static var profile: String { get }
    var row: ErrorRow { get }
}

extension ErrorCatalog {
    func make(_ status: Int, _ code: String, _ message: String, when: String) -> ErrorRow {
        ErrorRow(profile: Self.profile, status: status, code: code, message: message, when: when)
    }
}

/// Errors every dialect can answer, in each dialect's own encoding.
public enum CommonError: ErrorCatalog {
    case notFound, malformedFraming, payloadTooLarge, storeUnavailable, internalError

    public static let profile = "all"

    /// The situation a dialect file names to answer this itself (`errors.answers`).
    var situationKey: String {
        switch self {
        case .notFound: Situation.notFound(method: "", path: "").key
        case .malformedFraming: Situation.malformedFraming("").key
        case .payloadTooLarge: Situation.payloadTooLarge("").key
        case .storeUnavailable: Situation.storeUnavailable.key
        case .internalError: Situation.internalError.key
        }
    }

    public var row: ErrorRow {
        switch self {
        case .notFound: make(404, "not_found", "No such endpoint", when: "the path matches no route of the running dialect")
        case .malformedFraming:
            make(
                400, "invalid_request", "Malformed HTTP request framing",
                when:
                    "a request line or headers that cannot be parsed, a chunked body with a bad chunk size or chunks not ended by CRLF, or a `Transfer-Encoding` other than `chunked`; the connection closes after the answer"
            )
        case .payloadTooLarge:
            make(
                413, "payload_too_large", "Request body exceeds the server's limit",
                when: "the body is larger than `--max-body` bytes (default 65536)")
        case .storeUnavailable:
            make(
                503, "temporarily_unavailable", "Token store unavailable",
                when: "the `--state` database could not be reached or failed; the request can be retried")
        case .internalError:
            make(
                500, "server_error", "Internal error in authmock (please report it)",
                when: "a bug in authmock; no client input should ever produce it")
        }
    }
}

/// The standards dialect: RFC 6749 token endpoint errors, RFC 6750 resource errors.
public enum OAuth2Error: ErrorCatalog {
    // Token, revocation and introspection endpoints.
    case missingParameter, repeatedParameter, malformedBody, unsupportedContentType, multipleClientAuth, methodNotAllowed
    case invalidClientBasic, invalidClient
    case wrongCredentials
    case refresh(RefreshTokenFailure)
    case code(AuthorizationCodeFailure)
    case unauthorizedClient, unsupportedGrantType, invalidScope
    // Authorization endpoint.
    case authorizeUnknownClient, authorizeBadRedirect, authorizeUnsupportedResponseType
    case authorizePKCERequired, authorizeInvalidScope
    // OpenID Connect logout.
    case logoutBadHint
    // Protected resources.
    case resourceMissingToken, resourceNotBearer
    case resourceToken(AccessTokenFailure)
    case insufficientScope

    public static let profile = DialectName.oauth2

    public static var allCases: [OAuth2Error] {
        [
            .missingParameter, .repeatedParameter, .malformedBody, .unsupportedContentType, .multipleClientAuth, .methodNotAllowed,
            .invalidClientBasic, .invalidClient, .wrongCredentials,
        ]
            + RefreshTokenFailure.allCases.map { .refresh($0) }
            + AuthorizationCodeFailure.allCases.map { .code($0) }
            + [
                .unauthorizedClient, .unsupportedGrantType, .invalidScope,
                .authorizeUnknownClient, .authorizeBadRedirect, .authorizeUnsupportedResponseType,
                .authorizePKCERequired, .authorizeInvalidScope, .logoutBadHint,
                .resourceMissingToken, .resourceNotBearer,
            ]
            + AccessTokenFailure.allCases.map { .resourceToken($0) }
            + [.insufficientScope]
    }

    public var row: ErrorRow {
        switch self {
        case .missingParameter:
            make(400, "invalid_request", "Missing required parameter", when: "a required form parameter is absent or empty; the description names it")
        case .repeatedParameter:
            make(400, "invalid_request", "Parameter included more than once", when: "any form parameter appears twice (RFC 6749 section 3.2)")
        case .malformedBody:
            make(
                400, "invalid_request", "Body is not valid application/x-www-form-urlencoded",
                when: "the body has bad percent-encoding or is not UTF-8")
        case .unsupportedContentType:
            make(
                400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded",
                when: "a token, revocation or introspection request has another content type")
        case .multipleClientAuth:
            make(
                400, "invalid_request", "Client used more than one authentication method",
                when: "both HTTP Basic and `client_secret` in the body (RFC 6749 section 2.3)")
        case .methodNotAllowed:
            make(
                405, "invalid_request", "The endpoint takes POST",
                when:
                    "a token, revocation or introspection endpoint asked with another method (RFC 6749 section 3.2); the answer carries `Allow: POST`"
            )
        case .invalidClientBasic:
            make(
                401, "invalid_client", "Client authentication failed",
                when: "unknown client or wrong secret sent with HTTP Basic; the answer carries `WWW-Authenticate: Basic realm=\"authmock\"`")
        case .invalidClient:
            make(
                401, "invalid_client", "Client authentication failed",
                when: "unknown client or wrong secret sent in the body, or no client authentication at all")
        case .wrongCredentials: make(400, "invalid_grant", "Wrong username or password", when: "password grant with credentials that match no user")
        case .refresh(.unknown):
            make(400, "invalid_grant", "Refresh token is not known", when: "the refresh token was never issued by this server run")
        case .refresh(.expired):
            make(400, "invalid_grant", "Refresh token expired", when: "the refresh token is past its lifetime on the server clock")
        case .refresh(.revoked):
            make(
                400, "invalid_grant", "Refresh token revoked",
                when: "the token or its family was revoked (revocation endpoint, control API, or reuse detection)")
        case .refresh(.reused):
            make(
                400, "invalid_grant", "Refresh token already used; its whole family is now revoked",
                when: "a rotated refresh token is presented again after the grace window (RFC 9700 section 4.14.2)"
            )
        case .refresh(.clientMismatch):
            make(
                400, "invalid_grant", "Refresh token was issued to another client",
                when: "the authenticated client is not the one the token was issued to")
        case .code(.unknown): make(400, "invalid_grant", "Authorization code is not known", when: "the code was never issued")
        case .code(.expired):
            make(400, "invalid_grant", "Authorization code expired", when: "the code is older than its 60 s lifetime on the server clock")
        case .code(.used):
            make(
                400, "invalid_grant", "Authorization code already used; tokens issued with it are revoked",
                when: "a code is redeemed a second time (RFC 6749 section 4.1.2)")
        case .code(.clientMismatch):
            make(
                400, "invalid_grant", "Authorization code was issued to another client", when: "the redeeming client differs from the authorizing one"
            )
        case .code(.redirectMismatch):
            make(
                400, "invalid_grant", "redirect_uri does not match the authorization request",
                when: "`redirect_uri` differs from the one sent to `/oauth/authorize`")
        case .code(.pkceMismatch):
            make(
                400, "invalid_grant", "code_verifier does not match code_challenge",
                when: "BASE64URL(SHA256(code_verifier)) differs from the S256 challenge")
        case .code(.pkceMissing):
            make(
                400, "invalid_grant", "code_verifier is required",
                when: "the authorization request had a PKCE challenge and the token request has no verifier")
        case .unauthorizedClient:
            make(400, "unauthorized_client", "Client may not use this grant type", when: "a public client (no secret) asks for `client_credentials`")
        case .unsupportedGrantType:
            make(
                400, "unsupported_grant_type", "Grant type not supported",
                when: "`grant_type` is none of password, client_credentials, refresh_token, authorization_code")
        case .invalidScope:
            make(400, "invalid_scope", "Requested scope is not allowed for this client", when: "a requested scope is not in the client's `scopes`")
        case .authorizeUnknownClient:
            make(
                400, "invalid_request", "Unknown client_id",
                when: "`/oauth/authorize` with a missing or unknown `client_id`; shown to the user, never redirected")
        case .authorizeBadRedirect:
            make(
                400, "invalid_request", "redirect_uri is missing or not registered",
                when: "`/oauth/authorize` with a `redirect_uri` the client did not register; never redirected")
        case .authorizeUnsupportedResponseType:
            make(
                302, "unsupported_response_type", "Only response_type=code is supported",
                when: "redirected back with this `error` when `response_type` is not `code`")
        case .authorizePKCERequired:
            make(
                302, "invalid_request", "PKCE with code_challenge_method=S256 is required",
                when: "redirected back with this `error` when `code_challenge` is missing or its method is not S256")
        case .authorizeInvalidScope:
            make(
                302, "invalid_scope", "Requested scope is not allowed for this client",
                when: "redirected back with this `error` for a scope outside the client's `scopes`")
        case .logoutBadHint:
            make(
                400, "invalid_request", "id_token_hint is not an id token this server signed",
                when: "`/oauth/logout` with an `id_token_hint` that is not an id token signed by one of this server's keys (docs/oidc.md)")
        case .resourceMissingToken:
            make(
                401, "missing_token", "No access token was sent",
                when: "no `Authorization` header; `WWW-Authenticate: Bearer realm=\"authmock\"` without an `error` attribute (RFC 6750 section 3.1)")
        case .resourceNotBearer:
            make(
                401, "missing_token", "Authorization scheme must be Bearer",
                when: "an `Authorization` header in another scheme, or a bare token without the `Bearer ` prefix; no `error` attribute")
        case .resourceToken(.missing):
            make(401, "missing_token", "Bearer credential is empty", when: "`Authorization: Bearer` with nothing after it; no `error` attribute")
        case .resourceToken(.malformed):
            make(
                401, "invalid_token", "Access token is malformed",
                when:
                    "not a JWS in compact form with canonical base64url parts, claims of the wrong shape, a `crit` header, or times beyond year 5000")
        case .resourceToken(.wrongAlgorithm):
            make(
                401, "invalid_token", "Access token uses an algorithm other than the server's",
                when: "`alg` is `none` or anything but the server's `--signing-alg` (HS256 unless set)")
        case .resourceToken(.badSignature):
            make(
                401, "invalid_token", "Access token signature is invalid",
                when:
                    "the server's algorithm, but not signed with its key (forged or tampered), a `kid` naming another key, or a key dropped after its rotation grace"
            )
        case .resourceToken(.wrongAudience):
            make(401, "invalid_token", "Access token is for another audience", when: "`aud` does not contain this server's audience")
        case .resourceToken(.wrongIssuer):
            make(
                401, "invalid_token", "Access token is from another issuer",
                when: "signed with this server's key, but `iss` is not this server's issuer")
        case .resourceToken(.notYetValid):
            make(401, "invalid_token", "Access token is not valid yet", when: "`nbf` or `iat` lies ahead of the server clock")
        case .resourceToken(.expired):
            make(401, "invalid_token", "Access token expired", when: "`exp` (or a forced expiry) is at or before the server clock")
        case .resourceToken(.revoked):
            make(401, "invalid_token", "Access token revoked", when: "revoked directly or through its family, or unknown to this server run")
        case .insufficientScope:
            make(
                403, "insufficient_scope", "Access token lacks the scope this resource requires",
                when: "GET/HEAD need `read`, other methods `write`, `/api/admin/` needs `admin`; the header names the scope")
        }
    }
}

// The control API's errors (`ControlError`, AuthmockModel): their rows.
extension ControlError: ErrorCatalog {
    public static let profile = "control"

    public var row: ErrorRow {
        switch self {
        case .invalidJSON: make(400, "invalid_json", "Body is not a JSON object", when: "a control request body that does not parse as a JSON object")
        case .unknownField:
            make(
                400, "unknown_field", "Unknown field",
                when: "a field the operation does not know; the message lists the expected ones and suggests the closest")
        case .missingField: make(400, "missing_field", "Missing required field", when: "a required field is absent")
        case .invalidValue:
            make(
                400, "invalid_value", "Invalid value", when: "a field of the wrong type or out of range (negative seconds, unknown kind, bad status)")
        case .adminTokenRequired:
            make(
                401, "admin_token_required", "Control API needs the admin token",
                when: "an admin token is configured and the request lacks `Authorization: Bearer <admin token>`; OAuth tokens never open it")
        case .crossOrigin:
            make(
                403, "cross_origin", "Control API refuses requests from other web origins",
                when:
                    "a request whose `Origin` is neither the server's own nor one of `--cors-origin`'s: a web page the developer happens to have open must not move the clock, add faults or reset the mock"
            )
        case .foreignHost:
            make(
                403, "foreign_host", "Control API answers this machine's names only",
                when:
                    "no admin token is configured and the request's `Host` is a DNS name other than localhost, `--host`'s or `--public-url`'s: a page whose name was made to resolve to 127.0.0.1 (DNS rebinding) must not steer the mock; set an admin token to use another name"
            )
        case .notFound: make(404, "not_found", "No such control route", when: "a path under `/_authmock/` that is not listed by `GET /_authmock/`")
        case .methodNotAllowed:
            make(
                405, "method_not_allowed", "Method not allowed on this control route",
                when: "a listed control path with another method (OPTIONS and TRACE too); `Allow` names the methods it takes")
        case .notJSON:
            make(
                415, "unsupported_media_type", "Control request bodies are JSON",
                when:
                    "a control request with a body whose `Content-Type` is not `application/json` (a form or `text/plain` post is what a cross-site page can send)"
            )
        case .notRotatable:
            make(
                409, "not_rotatable", "HS256 keys do not rotate",
                when:
                    "`POST /_authmock/keys/rotate` on a server signing with HS256, whose secret is shared rather than published (start it with `--signing-alg RS256` or `ES256`), or on `authmock proxy`, whose keys are the backend's"
            )
        case .notJudging:
            make(
                409, "not_judging", "This server does not judge the traffic",
                when: "`GET /_authmock/verdicts` on a server started without `--judge` (`authmock serve --judge`, `authmock proxy --judge`)")
        case .storeUnavailable:
            make(503, "store_unavailable", "Token store unavailable", when: "the `--state` database could not be reached or failed")
        }
    }
}

/// What rfc-lax changes in the oauth2 dialect: the vendor mistakes real
/// servers make, which a robust client must survive.
public enum OAuth2LaxError: ErrorCatalog {
    case deadRefreshToken, tokenEndpointStatus, noChallenge

    public static let profile = "oauth2 (rfc-lax)"

    public var row: ErrorRow {
        switch self {
        case .deadRefreshToken:
            make(
                401, "invalid_request", "Refresh token is invalid",
                when: "instead of `invalid_grant`: a refresh token that is unknown, expired, revoked or reused")
        case .tokenEndpointStatus:
            make(
                401, "(as strict)", "(as strict)",
                when: "every error of the token endpoint answers 401 instead of 400, with the strict code and description")
        case .noChallenge: make(401, "(as strict)", "(as strict)", when: "resource 401s carry no `WWW-Authenticate` header")
        }
    }
}

/// The GraphQL endpoint (`/graphql`, in every dialect) answers in GraphQL's
/// own shape, `{"errors": [{"message", "extensions": {"code"}}], "data"}`,
/// with the codes Apollo Server uses, whatever the dialect.
public enum GraphQLAPIError: ErrorCatalog {
    case badRequest, parseFailed, overLimit, validationFailed, mutationOverGet
    case unauthenticated, forbidden
    case badUserInput, notFound

    public static let profile = "graphql"

    public var row: ErrorRow {
        switch self {
        case .badRequest:
            make(
                400, "BAD_REQUEST", "Not a GraphQL request",
                when:
                    "a POST body that is not a JSON object with a string `query`, a GET without `query`, `variables` that are not an object, a batch (JSON array), or several operations and no `operationName`"
            )
        case .parseFailed:
            make(
                400, "GRAPHQL_PARSE_FAILED", "Syntax error in the GraphQL document",
                when: "`query` does not parse; the message and `locations` say where")
        case .overLimit:
            make(
                400, "GRAPHQL_LIMIT_EXCEEDED", "The request is over a limit of this server",
                when:
                    "the document or its JSON is over one of the limits in docs/graphql.md (tokens, bracket nesting, field depth, fields, directives, JSON depth or values); the message names it. Checked before the token, so it costs less than a query"
            )
        case .validationFailed:
            make(
                400, "GRAPHQL_VALIDATION_FAILED", "The document is not valid against the schema",
                when: "unknown fields or arguments, wrong argument or variable types; one error per problem")
        case .mutationOverGet:
            make(405, "BAD_REQUEST", "Mutations need POST", when: "a mutation sent with GET (GraphQL over HTTP); the answer carries `Allow: POST`")
        case .unauthenticated:
            make(
                200, "UNAUTHENTICATED", "Not authenticated",
                when:
                    "`graphql_auth_errors: body`: the token is missing, expired, revoked, forged or a refresh token (a refresh `via: resources`: a dead refresh token); `data` is null and `extensions.reason` names the failure. With `http` (the default) the dialect answers these with its own 401"
            )
        case .forbidden:
            make(
                200, "FORBIDDEN", "Access token lacks the scope this operation requires",
                when:
                    "`graphql_auth_errors: body`: queries need `read`, mutations `write`; `extensions.scope` names it. With `http` the dialect's own 403"
            )
        case .badUserInput:
            make(
                200, "BAD_USER_INPUT", "Invalid argument",
                when: "`createNote(text:)` with empty text or more than 1000 characters: nothing is stored and `createNote` is null")
        case .notFound:
            make(
                200, "NOT_FOUND", "No such item",
                when: "`item(id:)` with an id that does not exist: partial data, `item` is null beside the other fields")
        }
    }
}

/// Every documented error, in the order the docs list them.
public enum ErrorTable {
    public static var catalogs: [(profile: String, rows: [ErrorRow])] {
        [
            (CommonError.profile, CommonError.allCases.map(\.row)),
            (OAuth2Error.profile, OAuth2Error.allCases.map(\.row)),
            (OAuth2LaxError.profile, OAuth2LaxError.allCases.map(\.row)),
        ]
            + BuiltinDialects.names.compactMap { name in BuiltinDialects.description(name).map { (name, $0.documentedRows) } }
            + [
                (GraphQLAPIError.profile, GraphQLAPIError.allCases.map(\.row)),
                (ControlError.profile, ControlError.allCases.map(\.row)),
            ]
    }

    public static var all: [ErrorRow] { catalogs.flatMap(\.rows) }

    /// The Markdown page `authmock errors` prints and `docs/errors.md` holds.
    public static func markdown() -> String {
        var out = """
            # Error reference

            Every error authmock can answer, per profile. Generated by `authmock errors` \
            from the table in `Sources/AuthmockServer/Errors/ErrorTable.swift`; do not edit by hand \
            (a test fails when this page and the code differ).

            Rows under **all** are answered by `oauth2`, and by every dialect file that \
            does not answer the situation itself (`not_found`, `malformed_framing`, \
            `payload_too_large`, `store_unavailable`, `internal_error`); rows under \
            **graphql** by the GraphQL endpoint of every dialect (docs/graphql.md); rows \
            under **control** by the control API of every dialect.

            """
        for (profile, rows) in catalogs {
            out += "\n## \(profile)\n\n" + table(rows)
        }
        return out
    }

    /// The rows a client of `profile` can meet, in the order its page lists
    /// them; nil for an unknown dialect. A dialect file: its own rows, the
    /// shared ones for the situations it does not answer itself, GraphQL's.
    public static func rows(forDialect profile: String) -> [ErrorRow]? {
        let graphQL = GraphQLAPIError.allCases.map(\.row)
        if profile == OAuth2Error.profile {
            return OAuth2Error.allCases.map(\.row) + OAuth2LaxError.allCases.map(\.row) + CommonError.allCases.map(\.row) + graphQL
        }
        if profile == GraphQLAPIError.profile { return graphQL }
        guard let dialect = BuiltinDialects.description(profile) else { return nil }
        let shared = CommonError.allCases.filter { dialect.errors.answers[$0.situationKey] == nil }.map(\.row)
        return dialect.documentedRows + shared + graphQL
    }

    /// A Markdown table of `rows`, as embedded in each dialect's page.
    public static func table(_ rows: [ErrorRow]) -> String {
        let showProfile = Set(rows.map(\.profile)).count > 1
        var out =
            showProfile
            ? "| from | HTTP | code | message | when |\n| --- | --- | --- | --- | --- |\n"
            : "| HTTP | code | message | when |\n| --- | --- | --- | --- |\n"
        for row in rows {
            out += (showProfile ? "| \(row.profile) " : "") + "| \(row.status) | `\(row.code)` | \(escape(row.message)) | \(escape(row.when)) |\n"
        }
        return out
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|")
    }
}

extension DialectDescription {
    /// The rows a dialect file documents, in the order of the situations they
    /// answer (docs/dialects.md), each once.
    public var documentedRows: [ErrorRow] {
        var rows: [ErrorRow] = []
        for (key, doc) in Situation.answerKeys {
            guard let row = errors.answers[key]?.row(profile: name, when: doc), !rows.contains(row) else { continue }
            rows.append(row)
        }
        return rows
    }
}
