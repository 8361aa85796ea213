import DriverProtocol
public import AuthmockCore
public import HTTPTypes
public import Hummingbird
public import NIOCore

/// A resource request let through, and any token its credentials were exchanged for.
public struct ResourceAccess: Sendable {
    public var grant: AccessGrant
    /// Set when the request presented a refresh token (header rotation).
    public var issued: IssuedTokens?
}

/// A server dialect: its own routes and encodings over the shared core.
/// Resources, health, the journal, faults and the control API are the same
/// for all; a dialect adds only what its backends do differently.
public protocol Dialect: Sendable {
    var name: String { get }
    /// One sentence for `--help` and the docs.
    var summary: String { get }
    func addRoutes(to routes: ClientRoutes, mock: Authmock)
    /// What a request is for, read before it is handled (for faults and the
    /// journal), with its body parsed the way the route will read it.
    func classify(method: HTTPRequest.Method, path: String, query: String?, headers: HTTPFields, body: ByteBuffer) -> RouteClassification
    /// The JSON body of a documented error, the way this dialect's backends write it.
    func errorBody(_ answer: ErrorAnswer) -> ByteBuffer
    /// This dialect's documented answer to a situation (`Errors/Situation.swift`).
    func answer(to situation: Situation) -> ErrorAnswer
    /// The bytes of a successful JSON answer (a dialect's `resources` template wraps it).
    func successBody<Body: Encodable>(_ body: Body) -> ByteBuffer
    /// Judges the credentials of a resource request: access, or the situation that refuses it.
    func authorizeResource(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async throws -> Result<ResourceAccess, Situation>
    /// Last look at a successful resource answer (header rotation adds a token here).
    func finishResource(_ response: Response, access: ResourceAccess, mock: Authmock) async throws -> ClientAnswer
    /// Lines printed at start: how to sign in and refresh with curl.
    func startupHints(baseURL: String, directory: Directory) -> [String]
    /// The paths of the dialect's own sign-in and refresh endpoints, without a
    /// trailing slash, where they may lie under `/api/`: a request there is no API call.
    var endpointPaths: [String] { get }
    /// Response headers a browser client must be able to read (CORS
    /// `Access-Control-Expose-Headers`) beyond the challenge and Retry-After.
    var exposedResponseHeaders: [String] { get }
    /// The fixed answer at `path` (a dialect's `documents:`), for a GET or
    /// HEAD no route serves. Looked up by path rather than routed: the
    /// router's trie adds a route in time linear in its siblings, so ten
    /// thousand documents took half a minute to start.
    func document(at path: String, mock: Authmock) -> Response?
}

extension Dialect {
    public var exposedResponseHeaders: [String] { [] }
    public var endpointPaths: [String] { [] }
    public func document(at path: String, mock: Authmock) -> Response? { nil }

    public func successBody<Body: Encodable>(_ body: Body) -> ByteBuffer {
        JSONResponse.bytes(body)
    }

    /// A successful JSON answer in this dialect's shape.
    func success<Body: Encodable>(_ body: Body, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        JSONResponse.response(successBody(body), status: status, headers: headers)
    }

    public func authorizeResource(
        _ request: Request, context: AuthmockRequestContext, mock: Authmock
    ) async throws -> Result<ResourceAccess, Situation> {
        try await Resources.authorizeBearer(request, context: context, mock: mock).map { ResourceAccess(grant: $0) }
    }

    public func finishResource(_ response: Response, access: ResourceAccess, mock: Authmock) async throws -> ClientAnswer {
        .init(response: response, issued: access.issued)
    }

    /// This dialect's answer to `situation`, its code noted for the journal and log.
    func fail(_ situation: Situation, context: AuthmockRequestContext) -> Response {
        context.notes.situation = situation.key
        return fail(answer(to: situation), context: context)
    }

    /// Builds the answer for a row of the dialect's own catalog (oauth2's
    /// grant-specific errors), its code noted for the journal and log.
    func fail(_ error: some ErrorCatalog, detail: String? = nil, headers: HTTPFields = [:], context: AuthmockRequestContext) -> Response {
        fail(ErrorAnswer(error, detail: detail, headers: headers), context: context)
    }

    /// A documented error as this dialect's backends answer it (its status is the row's).
    func errorResponse(_ answer: ErrorAnswer) -> Response {
        JSONResponse.response(errorBody(answer), status: .init(code: answer.row.status), headers: answer.headers)
    }

    func fail(_ answer: ErrorAnswer, context: AuthmockRequestContext) -> Response {
        context.notes.errorCode = answer.row.code
        var response = errorResponse(answer)
        if answer.status != answer.row.status { response.status = .init(code: answer.status) }
        return response
    }
}

/// Options that only some dialects read; each is documented on its page.
public struct DialectOptions: Sendable, Equatable {
    /// oauth2: `strict` or `rfc-lax` error behaviour.
    public var oauth2Errors: OAuth2ErrorStyle = .strict
    /// A refresh on resources: the response header carrying
    /// a new access token, in place of the dialect's own; nil: the dialect's.
    public var rotationHeader: String? = nil
    /// A refresh on resources: every Nth successful resource answer rotates the access token.
    public var rotateEvery: Int? = nil
    /// A refresh on resources: seconds a rotated-away access token keeps working.
    public var rotationGraceSeconds: Int = 0
    /// A dialect served from a file: the status
    /// of every refused refresh in place of the file's.
    public var refreshFailureStatus: Int? = nil
    /// A sign-in naming no user: said as a wrong password, or (`reveal`) as
    /// the dialect's own `user_unknown` answer.
    public var unknownUser: UnknownUser = .hide

    public init() {}

    public func validate() throws(SettingsError) {
        if let every = rotateEvery, every < 1 { throw SettingsError("rotate_every must be at least 1, got \(every)") }
        if rotationGraceSeconds < 0 { throw SettingsError("rotation_grace must not be negative") }
        if let rotationHeader, HTTPField.Name(rotationHeader) == nil {
            throw SettingsError("rotation header '\(rotationHeader)' is not a valid header name")
        }
        if let status = refreshFailureStatus, !(400...499).contains(status) {
            throw SettingsError("refresh_failure_status must be a 4xx status, got \(status)")
        }
    }
}

/// What a sign-in with a user name no user has is told. Backends that keep
/// user names private answer it as a wrong password; others say the user
/// does not exist (a user pool whose app client has `PreventUserExistenceErrors:
/// LEGACY`, the API's default).
public enum UnknownUser: String, Sendable, CaseIterable {
    case hide
    case reveal
}

public enum OAuth2ErrorStyle: String, Sendable, CaseIterable {
    case strict
    case rfcLax = "rfc-lax"
}

/// The dialects `--dialect` accepts: `oauth2`, written in Swift, and every
/// built-in dialect file (`dialects/`), so a new file needs no Swift.
public enum Dialects {
    /// oauth2, then every built-in file by name.
    public static let names = [DialectName.oauth2] + BuiltinDialects.names.filter { $0 != DialectName.oauth2 }

    public static func make(_ name: String, options: DialectOptions) -> (any Dialect)? {
        if name == DialectName.oauth2 { return OAuth2Dialect(errors: options.oauth2Errors) }
        return BuiltinDialects.description(name).map { DeclaredDialect($0, options: options) }
    }
}
