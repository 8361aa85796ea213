public import AuthmockCore
public import HTTPTypes
public import Hummingbird

/// What a client route answers, and the tokens the answer hands out. The
/// journal and the metrics read `issued` from here, so a route cannot forget
/// to report a token it issued.
public struct ClientAnswer: Sendable {
    public var response: Response
    public var issued: IssuedTokens?
    /// Mutations the request applied (GraphQL), so a test can see one applied twice.
    public var mutationsApplied: Int? = nil

    public static func plain(_ response: Response) -> ClientAnswer { .init(response: response, issued: nil) }
    public static func issued(_ tokens: IssuedTokens, _ response: Response) -> ClientAnswer { .init(response: response, issued: tokens) }
}

/// The routes a client under test calls (dialect routes, resources, health).
/// Every request to them passes the observation middleware (journal, fault
/// rules, metrics) and has its failures answered in the dialect's shape;
/// the control API and `/metrics` are outside this group.
public struct ClientRoutes {
    let group: RouterGroup<AuthmockRequestContext>

    /// A route that never issues tokens.
    public func on(
        _ path: String, method: HTTPRequest.Method,
        use handle: @escaping @Sendable (Request, AuthmockRequestContext) async throws -> Response
    ) {
        group.on(RouterPath(path), method: method, use: handle)
        // HEAD is GET without the body (RFC 9110 section 9.3.2); the router
        // would not fall back from a path's GET to a wildcard's HEAD.
        if method == .get { group.on(RouterPath(path), method: .head, use: handle) }
    }

    public func get(_ path: String, use handle: @escaping @Sendable (Request, AuthmockRequestContext) async throws -> Response) {
        on(path, method: .get, use: handle)
    }

    public func post(_ path: String, use handle: @escaping @Sendable (Request, AuthmockRequestContext) async throws -> Response) {
        on(path, method: .post, use: handle)
    }

    /// A route that may issue tokens: it returns them with its answer.
    public func issuing(
        _ method: HTTPRequest.Method, _ path: String,
        use handle: @escaping @Sendable (Request, AuthmockRequestContext) async throws -> ClientAnswer
    ) {
        let responder: @Sendable (Request, AuthmockRequestContext) async throws -> Response = { request, context in
            let answer = try await handle(request, context)
            context.notes.issued = answer.issued
            context.notes.mutationsApplied = answer.mutationsApplied
            return answer.response
        }
        group.on(RouterPath(path), method: method, use: responder)
        if method == .get { group.on(RouterPath(path), method: .head, use: responder) }
    }
}
