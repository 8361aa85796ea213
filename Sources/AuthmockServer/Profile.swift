import AuthmockCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Why a protected resource refused a request, before the profile encodes it.
public enum ResourceRefusal: Error, Equatable {
    /// `Authorization` missing, or not in the Bearer scheme.
    case noBearer(notBearer: Bool)
    case token(AccessTokenFailure)
    case insufficientScope(required: String)
}

/// A server dialect: its own routes and encodings over the shared core.
/// Resources, health, errors for unknown routes and (later) the control API
/// are the same for all; a profile adds only what its backends do differently.
public protocol Profile: Sendable {
    var name: String { get }
    /// One sentence for `--help` and the docs.
    var summary: String { get }
    func addRoutes(to router: Router<AuthmockRequestContext>, mock: Authmock)
    /// What a request is for, read before it is handled (for faults and the journal).
    func classify(method: HTTPRequest.Method, path: String, headers: HTTPFields, body: ByteBuffer) -> RouteClassification
    /// Encodes a documented error the way this dialect's backends do.
    func errorResponse(_ row: ErrorRow, detail: String?, headers: HTTPFields) -> Response
    /// Encodes a refused resource request (and notes its code, via `fail`).
    func resourceRefusal(_ refusal: ResourceRefusal, context: AuthmockRequestContext) -> Response
    /// Lines printed at start: how to sign in and refresh with curl.
    func startupHints(baseURL: String, directory: Directory) -> [String]
}

extension Profile {
    /// Builds the answer for `error` and notes its code for the request log.
    func fail(_ error: some ErrorCatalog, detail: String? = nil, headers: HTTPFields = [:], context: AuthmockRequestContext) -> Response {
        let row = error.row
        context.notes.errorCode = row.code
        return errorResponse(row, detail: detail, headers: headers)
    }
}

/// The profiles `--profile` accepts.
public enum Profiles {
    public static let all: [any Profile] = [OAuth2Profile()]
    public static var names: [String] { all.map(\.name) }
    public static func named(_ name: String) -> (any Profile)? { all.first { $0.name == name } }
}
