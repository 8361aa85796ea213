/// What a request is for, independent of the dialect's paths: fault rules
/// match on it and the journal records it, so a scenario can say "the
/// refresh request" whichever profile serves it.
public enum RouteKind: String, Sendable, Codable, CaseIterable {
    /// Signing in: password, client credentials or code grants, `/auth/login`.
    case login
    /// Exchanging a refresh token for new tokens.
    case refresh
    /// A protected resource under `/api/`.
    case resource
    case authorize, revoke, introspect, metadata, health
    /// Anything no route serves.
    case other

    /// `token` in a fault rule's match stands for both token-endpoint kinds.
    public static func parseMatch(_ text: String) -> Set<RouteKind>? {
        if text == "token" { return [.login, .refresh] }
        return RouteKind(rawValue: text).map { [$0] }
    }

    public static var matchNames: [String] { ["token"] + allCases.map(\.rawValue) }

    // Compared and hashed by case, not by the raw string (a raw-value enum's
    // default): the journal, metrics and arrival counts do both on every
    // request.
    public static func == (a: RouteKind, b: RouteKind) -> Bool { a.ordinal == b.ordinal }
    public func hash(into hasher: inout Hasher) { hasher.combine(ordinal) }

    /// 0 to `allCases.count - 1`, in declaration order.
    var ordinal: Int {
        switch self {
        case .login: 0
        case .refresh: 1
        case .resource: 2
        case .authorize: 3
        case .revoke: 4
        case .introspect: 5
        case .metadata: 6
        case .health: 7
        case .other: 8
        }
    }
}

/// What a profile reads from a request before it is handled.
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

    /// The kinds every profile shares, by path.
    static func shared(path: String) -> RouteClassification {
        if isResource(path: path) { return .init(kind: .resource) }
        if path == "/health" { return .init(kind: .health) }
        if path.hasPrefix("/.well-known/") { return .init(kind: .metadata) }
        return .init(kind: .other)
    }
}
