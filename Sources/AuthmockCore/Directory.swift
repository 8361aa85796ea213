public import DriverProtocol
/// A user the mock signs in. Passwords are plain text on purpose: this is a
/// test double and its configuration is test data.
public struct User: Sendable, Codable, Equatable {
    public var username: String
    public var password: String
    /// OpenID Connect claims (`name`, `email`, anything JSON) for id tokens
    /// and `/oauth/userinfo`; `sub` is always the username.
    public var claims: [String: ClaimValue]?

    public init(username: String, password: String, claims: [String: ClaimValue]? = nil) {
        self.username = username
        self.password = password
        self.claims = claims
    }
}

/// An OAuth client registered on the server.
public struct Client: Sendable, Codable, Equatable {
    public var id: String
    /// `nil` makes a public client (authorization code + PKCE without a secret).
    public var secret: String?
    /// Scopes the client may ask for; the default grant is `defaultScopes`.
    public var scopes: [String]
    public var defaultScopes: [String]
    /// Allowed redirect URIs for the authorization-code grant; empty allows any.
    public var redirectURIs: [String]

    public init(
        id: String, secret: String?, scopes: [String] = Client.allowedScopes,
        defaultScopes: [String] = ["read", "write"], redirectURIs: [String] = []
    ) {
        self.id = id
        self.secret = secret
        self.scopes = scopes
        self.defaultScopes = defaultScopes
        self.redirectURIs = redirectURIs
    }

    /// What a client may ask for unless configured: the API's scopes and
    /// OpenID Connect's (`openid` adds an id token, docs/oidc.md).
    public static let allowedScopes = ["read", "write", "admin", "openid", "profile", "email"]

    enum CodingKeys: String, CodingKey {
        case id = "client_id"
        case secret = "client_secret"
        case scopes
        case defaultScopes = "default_scopes"
        case redirectURIs = "redirect_uris"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id),
            secret: try c.decodeIfPresent(String.self, forKey: .secret),
            scopes: try c.decodeIfPresent([String].self, forKey: .scopes) ?? Client.allowedScopes,
            defaultScopes: try c.decodeIfPresent([String].self, forKey: .defaultScopes) ?? ["read", "write"],
            redirectURIs: try c.decodeIfPresent([String].self, forKey: .redirectURIs) ?? []
        )
    }
}

/// Who may sign in and which clients exist.
public struct Directory: Sendable, Equatable {
    public var users: [User]
    public var clients: [Client]

    public static let defaultUser = User(
        username: "alice", password: "wonderland",
        claims: ["name": .string("Alice Liddell"), "email": .string("alice@example.com"), "email_verified": .boolean(true)])
    public static let defaultClient = Client(id: "demo", secret: "demo-secret")

    /// The default user under another name: a backend whose user names are
    /// emails signs `alice@example.com` in, not `alice`.
    public static func defaultUser(named name: String) -> User {
        var user = defaultUser
        user.username = name
        return user
    }

    public init(users: [User] = [Directory.defaultUser], clients: [Client] = [Directory.defaultClient]) {
        self.users = users
        self.clients = clients
    }

    /// This directory as the startup banner may print it: secrets that are
    /// not the built-in demo ones (they came from `--config`) become shell
    /// variables, so a banner in a CI log or a screen share leaks nothing.
    public var redactedForDisplay: Directory {
        var shown = self
        for index in shown.users.indices where shown.users[index].password != Self.defaultUser.password {
            shown.users[index].password = "$PASSWORD"
        }
        for index in shown.clients.indices where shown.clients[index].secret != nil && shown.clients[index].secret != Self.defaultClient.secret {
            shown.clients[index].secret = "$CLIENT_SECRET"
        }
        return shown
    }

    public func user(named name: String) -> User? {
        users.first { $0.username == name }
    }

    public func client(id: String) -> Client? {
        clients.first { $0.id == id }
    }

    /// Checks a username and password; comparison is constant-time so the mock
    /// itself never becomes a timing oracle in somebody's security test.
    public func authenticate(username: String, password: String) -> User? {
        guard let user = user(named: username), constantTimeEquals(user.password, password) else { return nil }
        return user
    }

    public func authenticateClient(id: String, secret: String?) -> Client? {
        guard let client = client(id: id) else { return nil }
        switch (client.secret, secret) {
        case (nil, nil): return client
        case (let expected?, let given?): return constantTimeEquals(expected, given) ? client : nil
        default: return nil
        }
    }
}

func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8), y = Array(b.utf8)
    var diff = UInt8(x.count == y.count ? 0 : 1)
    for i in 0..<max(x.count, y.count) {
        diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
    }
    return diff == 0
}
