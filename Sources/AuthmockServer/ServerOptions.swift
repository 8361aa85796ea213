public import DriverProtocol
public import AuthmockCore

/// Everything `authmock serve` (or a test, or the scenario runner) decides
/// about one server instance before it starts.
public struct ServerOptions: Sendable {
    public var host: String
    /// 0 picks a free port.
    public var port: Int
    /// A built-in dialect's name (`Dialects.names`); ignored when `dialect` is set.
    public var profile: String
    /// A dialect described in a file (`--dialect`), served instead of `profile`.
    public var dialect: DialectDescription? = nil
    public var tokens: TokenSettings
    public var directory: Directory
    public var signingKey: SigningKey
    /// Largest request body accepted, in bytes; larger ones get 413.
    public var maxBodyBytes: Int
    /// Base URL clients use to reach the server (issuer and metadata URLs);
    /// nil derives it from host and the bound port.
    public var publicURL: String?
    /// Most journal entries kept; older ones are dropped and counted.
    public var journalLimit: Int
    /// Required as `Authorization: Bearer` on `/_authmock/` when set; must be
    /// set when listening on anything but loopback.
    public var adminToken: String?
    /// Serve HTTPS with this certificate and key instead of plain HTTP.
    public var tls: TLSIdentity? = nil
    /// Options only some dialects read (header names, rotation, error styles).
    public var dialectOptions: DialectOptions = DialectOptions()
    /// How `/graphql` answers a token it refuses.
    public var graphQLAuthErrors: GraphQLAuthErrors = .http
    /// Browser origins allowed to call the client-facing routes (`CORSPolicy`'s
    /// text: empty or `off`, `*`, or a comma-separated list of origins).
    public var corsOrigin = ""
    /// The journal's memory bound in bytes (an estimate per entry), beside `journalLimit`.
    public var journalMaxBytes = 32 << 20
    /// Seconds a keep-alive connection may sit between requests before it is closed.
    public var idleTimeoutSeconds = 60
    /// Seconds a request may take to arrive, head and body, counted from the
    /// last bytes that made progress: a client that stalls half-way is cut
    /// off (its socket and descriptor freed) instead of being waited for forever.
    public var requestReadTimeoutSeconds = 10
    /// Seconds SIGTERM or SIGINT waits for requests in flight before the
    /// server closes every connection and exits.
    public var drainSeconds = 10
    /// Host name clients use to reach a listener on `host` when it differs
    /// (an emulator reaches the machine as 10.0.2.2); the bound port is kept.
    /// Ignored when `publicURL` is set.
    public var advertisedHost: String? = nil
    /// Where token state lives: `memory`, `sqlite:PATH` or `postgres://...` (docs/state.md).
    public var state = "memory"
    /// Table names of a database store start with this; the runner gives
    /// each case server its own, so cases sharing one database stay apart.
    public var stateTablePrefix = "authmock_"
    /// `authmock proxy`: the real backend every request of the client's is
    /// forwarded to, and what the proxy does to its tokens on the way.
    public var upstream: UpstreamOptions? = nil

    /// Whether a body of `length` bytes (its `Content-Length`) goes to the
    /// backend unread: at a proxy, over `--max-body`, where no sign-in or
    /// refresh is that large and a photo upload is. Journaled by its length,
    /// unhashed; anywhere else such a body is 413.
    public func streamsUpload(length: Int) -> Bool { upstream != nil && length > maxBodyBytes }
    /// `--judge`: `GET /_authmock/verdicts` judges the traffic (with the
    /// judge the server was given, `Authmock.judge`).
    public var judge = false

    public init(
        host: String = "127.0.0.1", port: Int = 8080, profile: String = "oauth2",
        tokens: TokenSettings = TokenSettings(), directory: Directory = Directory(),
        signingKey: SigningKey = .random(), maxBodyBytes: Int = 65_536, publicURL: String? = nil,
        journalLimit: Int = 100_000, adminToken: String? = nil
    ) {
        self.journalLimit = journalLimit
        self.adminToken = adminToken
        self.host = host
        self.port = port
        self.profile = profile
        self.tokens = tokens
        self.directory = directory
        self.signingKey = signingKey
        self.maxBodyBytes = maxBodyBytes
        self.publicURL = publicURL
    }
}

extension ServerOptions {
    /// Loopback addresses: the control API is open there without an admin token.
    public var listensOnLoopbackOnly: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// How the GraphQL endpoint surfaces a refused token: as the dialect's own
/// HTTP 401/403 (what a REST auth middleware in front of `/graphql` does), or
/// Apollo Server's convention, HTTP 200 with `UNAUTHENTICATED`/`FORBIDDEN`
/// in `errors`, which client logic that looks only at the status never sees.
public enum GraphQLAuthErrors: String, Sendable, CaseIterable {
    case http
    case body
}
