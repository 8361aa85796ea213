/// What a request is for, independent of the dialect's paths: fault rules
/// match on it and the journal records it, so a scenario can say "the
/// refresh request" whichever dialect serves it.
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
    package var ordinal: Int {
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
