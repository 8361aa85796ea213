/// The driver protocol's messages (docs/driver-protocol.md, version 1), as
/// the runner sends them and drivers answer. DriverKit (the driver side) and
/// the runner both use these types, so the protocol is written down once.
public enum DriverProtocol {
    public static let version = 1
}

/// What the application finally saw for a call.
public enum OutcomeKind: String, Sendable, Codable, CaseIterable {
    case ok
    /// A non-2xx response reached the application.
    case httpError = "http_error"
    /// The client decided the user must sign in again.
    case reauthRequired = "reauth_required"
    /// No HTTP answer: refused, reset, timed out.
    case transportError = "transport_error"
    /// The library renewed the token before sending the call (its own clock
    /// said it had expired) and the refresh got no usable answer (a 5xx, a
    /// 429, a reset): the call itself was never sent. `status` is the
    /// refresh's, when it had one.
    case refreshFailed = "refresh_failed"
    /// The driver cannot express the request.
    case unsupported
    /// The `cancel` extension: the application cancelled the call (its
    /// screen closed, its task cancelled) before it had an answer.
    case cancelled
}

/// Optional protocol extensions a driver declares in its `hello` answer.
public enum Capability {
    /// A request to another host carries its full URL in `url`.
    public static let url = "url"
    /// The driver understands `logout`: the app signs the user out.
    public static let logout = "logout"
    /// A request may mark its body `bodyStream`: hand it to the library as a one-shot stream.
    public static let bodyStream = "bodyStream"
    /// The client speaks GraphQL: it reads errors in a 200 body, and reports a
    /// call whose answer had `errors` and no `data` as `http_error`.
    public static let graphQL = "graphql"
    /// The client is an OpenID Connect client: `login` may carry `openid`, and
    /// it validates every id token (at sign-in and on refresh).
    public static let oidc = "oidc"
    /// The client configures itself from `hello`'s `dialect` (a dialect file's
    /// description, docs/dialects.md), so it speaks any declared dialect.
    public static let dialect = "dialect"
    /// The client talks HTTPS only (an SDK that refuses http, an app with App Transport
    /// Security): its case servers serve HTTPS with a certificate made for
    /// the run, which `hello` carries in `caCertificate`.
    public static let tls = "tls"
    /// The driver understands `cancel`: the application cancels a call in
    /// flight (Task cancellation, OkHttp `Call.cancel`, an `AbortController`).
    public static let cancel = "cancel"
    /// The driver runs several instances of the application's client (an app
    /// and its extension or widget, two processes, two client objects) over
    /// one token store, as the app does: a request may name its `instance`.
    public static let instances = "instances"
}

/// A message from the runner: an `id` and one operation with its own fields.
/// On the wire one flat JSON object, `{"id", "op", ...the operation's fields}`.
public struct RunnerMessage: Sendable, Codable, Equatable {
    public var id: String
    public var operation: Operation

    public enum Operation: Sendable, Equatable {
        // Indirect: a hello carries a dialect's whole description, and a
        // large enum payload passed by value is what Swift 6.3 debug builds
        // corrupted in DriverKit (see `Hello`).
        indirect case hello(Hello)
        indirect case login(Login)
        indirect case request(Request)
        /// The `logout` extension: the application signs the user out.
        case logout
        /// The `cancel` extension: the application cancels the call of an
        /// earlier `request` (`call` is that message's id).
        case cancel(Cancel)
        case shutdown
        /// An `op` this side does not know: answered `unsupported`.
        case unknown(String)

        /// The `op` on the wire.
        public var name: String {
            switch self {
            case .hello: "hello"
            case .login: "login"
            case .request: "request"
            case .logout: "logout"
            case .cancel: "cancel"
            case .shutdown: "shutdown"
            case .unknown(let name): name
            }
        }
    }

    public struct Hello: Sendable, Codable, Equatable {
        public var `protocol`: Int?
        public var baseURL: String?
        public var profile: String?
        public var clientId: String?
        public var clientSecret: String?
        /// The `dialect` extension: when `profile` names a declared dialect, its
        /// description (the dialect file's shape, defaults filled in).
        public var dialect: DialectDescription?
        /// The `tls` extension: when `baseURL` is `https`, the PEM certificate
        /// the case server presents (self-signed, for 127.0.0.1 and localhost).
        public var caCertificate: String?

        public init(
            protocol: Int? = DriverProtocol.version, baseURL: String? = nil, profile: String? = nil, clientId: String? = nil,
            clientSecret: String? = nil, dialect: DialectDescription? = nil, caCertificate: String? = nil
        ) {
            self.protocol = `protocol`
            self.baseURL = baseURL
            self.profile = profile
            self.clientId = clientId
            self.clientSecret = clientSecret
            self.dialect = dialect
            self.caCertificate = caCertificate
        }
    }

    public struct Login: Sendable, Codable, Equatable {
        public var username: String?
        public var password: String?
        /// The `oidc` extension: sign in as an OpenID Connect client (code flow with a nonce).
        public var openid: Bool?

        public init(username: String? = nil, password: String? = nil, openid: Bool? = nil) {
            self.username = username
            self.password = password
            self.openid = openid
        }
    }

    public struct Request: Sendable, Codable, Equatable {
        public var method: String?
        public var path: String?
        /// The `url` extension: the full URL of a request to another host.
        public var url: String?
        public var headers: [String: String]?
        public var body: String?
        /// The `bodyStream` extension: the app hands the body over as a stream that can be read once.
        public var bodyStream: Bool?
        /// The `instances` extension: which instance of the client makes the
        /// call (1, the app, when absent; 2 and on: its extension, widget, ...).
        public var instance: Int?

        public init(
            method: String? = nil, path: String? = nil, url: String? = nil, headers: [String: String]? = nil, body: String? = nil,
            bodyStream: Bool? = nil, instance: Int? = nil
        ) {
            self.method = method
            self.path = path
            self.url = url
            self.headers = headers
            self.body = body
            self.bodyStream = bodyStream
            self.instance = instance
        }
    }

    public struct Cancel: Sendable, Codable, Equatable {
        /// The `id` of the `request` message whose call the application cancels.
        public var call: String

        public init(call: String) { self.call = call }
    }

    public init(id: String, _ operation: Operation) {
        self.id = id
        self.operation = operation
    }

    private enum Keys: String, CodingKey { case id, op }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(String.self, forKey: .id)
        let op = try container.decode(String.self, forKey: .op)
        // The operation's fields sit beside id and op.
        switch op {
        case "hello": operation = .hello(try Hello(from: decoder))
        case "login": operation = .login(try Login(from: decoder))
        case "request": operation = .request(try Request(from: decoder))
        case "logout": operation = .logout
        case "cancel": operation = .cancel(try Cancel(from: decoder))
        case "shutdown": operation = .shutdown
        default: operation = .unknown(op)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id)
        try container.encode(operation.name, forKey: .op)
        switch operation {
        case .hello(let hello): try hello.encode(to: encoder)
        case .login(let login): try login.encode(to: encoder)
        case .request(let request): try request.encode(to: encoder)
        case .cancel(let cancel): try cancel.encode(to: encoder)
        case .logout, .shutdown, .unknown: break
        }
    }

    public static func hello(
        id: String, baseURL: String, profile: String, clientID: String, clientSecret: String, dialect: DialectDescription? = nil,
        caCertificate: String? = nil
    ) -> Self {
        Self(
            id: id,
            .hello(
                Hello(
                    protocol: DriverProtocol.version, baseURL: baseURL, profile: profile, clientId: clientID, clientSecret: clientSecret,
                    dialect: dialect, caCertificate: caCertificate)))
    }

    public static func login(id: String, username: String, password: String, openid: Bool? = nil) -> Self {
        Self(id: id, .login(Login(username: username, password: password, openid: openid)))
    }

    public static func request(
        id: String, method: String, path: String, url: String?, headers: [String: String], body: String?, bodyStream: Bool? = nil,
        instance: Int? = nil
    ) -> Self {
        Self(
            id: id,
            .request(Request(method: method, path: path, url: url, headers: headers, body: body, bodyStream: bodyStream, instance: instance)))
    }

    public static func logout(id: String) -> Self { Self(id: id, .logout) }

    public static func cancel(id: String, call: String) -> Self { Self(id: id, .cancel(Cancel(call: call))) }

    public static func shutdown(id: String) -> Self { Self(id: id, .shutdown) }
}

/// A driver's answer. Every message gets exactly one, with the same `id`.
public struct DriverMessage: Sendable, Codable, Equatable {
    public var id: String
    public var ok: Bool
    public var outcome: OutcomeKind?
    public var status: Int?
    public var body: String?
    public var message: String?
    // hello
    public var driver: String?
    public var version: String?
    public var profiles: [String]?
    public var capabilities: [String]?
    /// How many seconds before a token's `expires_in` runs out the client
    /// renews it (optional): clock variants make their short tokens live
    /// this much longer, so they run out by its clock as they would for a
    /// client without a margin.
    public var renewalMargin: Double?
    // login (the `oidc` extension): the claims of the id token the client accepted
    public var idTokenClaims: [String: JSONValue]?

    public init(id: String, ok: Bool, outcome: OutcomeKind? = nil, status: Int? = nil, body: String? = nil, message: String? = nil) {
        self.id = id
        self.ok = ok
        self.outcome = outcome
        self.status = status
        self.body = body
        self.message = message
    }

    public static func hello(
        id: String, driver: String, version: String, profiles: [String], capabilities: [String], renewalMargin: Double? = nil
    ) -> Self {
        var answer = Self(id: id, ok: true)
        answer.renewalMargin = renewalMargin
        answer.driver = driver
        answer.version = version
        answer.profiles = profiles
        answer.capabilities = capabilities
        return answer
    }
}

/// The server dialects, as `hello` names them in `profile` and `profiles`,
/// `authmock serve --dialect` takes them and scenario files list them. One
/// is known by code, OAuth 2.0 (RFC 6749); every other is a dialect file
/// (`dialects/`, or a team's own), which reaches a driver as its
/// description (`hello`'s `dialect`).
public enum DialectName {
    public static let oauth2 = "oauth2"
}
