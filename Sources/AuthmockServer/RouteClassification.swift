public import AuthmockModel

/// What a dialect reads from a request before it is handled.
public struct RouteClassification: Sendable {
    public var kind: RouteKind
    /// `grant_type` of a token-endpoint request.
    public var grantType: String?
    /// The refresh token the request presents, wherever the dialect puts it.
    public var refreshToken: String?
    /// The body, parsed the way the route reads it.
    public var body: RequestBody

    public init(kind: RouteKind, grantType: String? = nil, refreshToken: String? = nil, body: RequestBody = .unread) {
        self.kind = kind
        self.grantType = grantType
        self.refreshToken = refreshToken
        self.body = body
    }

    /// The GraphQL request, when this is one.
    public var graphQL: GraphQLCall? {
        if case .graphQL(.success(let call)) = body { return call }
        return nil
    }

    /// The scope the request needs, when its kind of request decides it (a
    /// GraphQL mutation needs `write` though every GraphQL request is a POST).
    var requiredScope: String? { scope ?? graphQL?.requiredScope }
    /// The scope a route needs whatever the method (`/oauth/userinfo`: `openid`).
    var scope: String? = nil

    /// Whether `path` is a protected resource: under `/api/`, or `/graphql`.
    public static func isResource(path: String) -> Bool {
        path == "/api" || path.hasPrefix("/api/") || path == GraphQLCall.path
    }

    /// The kinds every dialect shares, by path.
    static func shared(path: String) -> RouteClassification {
        if isResource(path: path) { return .init(kind: .resource) }
        if path == "/health" { return .init(kind: .health) }
        if path.hasPrefix("/.well-known/") { return .init(kind: .metadata) }
        return .init(kind: .other)
    }
}
