// A driver imports only DriverKit: the protocol's vocabulary (outcome kinds,
// dialect names) comes with it.
@_exported import DriverProtocol
import Foundation
import Synchronization

/// The values `hello` brings: where the server is and who the client is.
public struct Hello: Sendable {
    public var baseURL: String
    public var profile: String
    public var clientID: String
    public var clientSecret: String
    /// The `dialect` capability: the declared dialect `profile` names, to configure the client from.
    public var dialect: DialectDescription? {
        get { dialectReference?.value }
        set { dialectReference = newValue.map(DialectReference.init) }
    }
    /// Behind a reference, so `Hello` stays small: passed by value to
    /// `makeClient`, a Hello carrying the description inline corrupted the
    /// driver's task in Swift 6.3 debug builds (the sync-to-async thunk of a
    /// synchronous `makeClient`; measured with the reference driver).
    private var dialectReference: DialectReference?
    /// The `tls` extension (or `authmock run --tls`): the PEM certificate an
    /// `https` base URL presents, for the client to trust.
    public var caCertificate: String?

    public init(
        baseURL: String, profile: String, clientID: String, clientSecret: String, dialect: DialectDescription? = nil,
        caCertificate: String? = nil
    ) {
        self.baseURL = baseURL
        self.profile = profile
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.dialect = dialect
        self.caCertificate = caCertificate
    }
}

private final class DialectReference: Sendable {
    let value: DialectDescription
    init(_ value: DialectDescription) { self.value = value }
}

/// One application call the runner asks for.
public struct DriverRequest: Sendable {
    public var method: String
    /// The server path (`/api/items`).
    public var path: String
    /// The full URL when the request goes to another host (the `url`
    /// capability); send there instead of to the base URL.
    public var url: String?
    /// `url` when there is one, otherwise `path`: what to hand an HTTP client.
    public var target: String { url ?? path }
    /// Forward every one of these on every attempt, retries included.
    public var headers: [String: String]
    public var body: String?
    /// The `bodyStream` capability: the app hands `body` over as a stream
    /// that can be read once (send it through the library's streaming body API).
    public var bodyStream = false
    /// The `instances` capability: which instance of the application's client
    /// makes the call (1, the app; 2 and on, its extension, widget, a second
    /// process), each over the one token store the app keeps.
    public var instance = 1
}

/// What the application finally saw.
public struct DriverOutcome: Sendable {
    /// The protocol's outcome kinds (`ok`, `http_error`, `reauth_required`, ...).
    public typealias Kind = OutcomeKind
    public var kind: Kind
    public var status: Int?
    public var body: String?
    public var message: String?
    /// A sign-in (the `oidc` extension): the claims of the id token the client accepted.
    public var idTokenClaims: [String: JSONValue]?

    public init(_ kind: Kind, status: Int? = nil, body: String? = nil, message: String? = nil, idTokenClaims: [String: JSONValue]? = nil) {
        self.kind = kind
        self.status = status
        self.body = body
        self.message = message
        self.idTokenClaims = idTokenClaims
    }

    public static func ok(status: Int, body: String?) -> Self { .init(.ok, status: status, body: body) }
}

/// What a driver wraps: one client library, signed in through `login` and
/// making the runner's calls through `request`. Calls arrive concurrently.
public protocol DriverClient: Sendable {
    func login(username: String, password: String) async -> DriverOutcome
    /// The `oidc` extension (declare `Capability.oidc`): `openID` signs in as
    /// an OpenID Connect client that validates every id token. The default
    /// answers an OpenID sign-in `unsupported` and any other through `login`.
    func login(username: String, password: String, openID: Bool) async -> DriverOutcome
    func request(_ request: DriverRequest) async -> DriverOutcome
    /// The `logout` extension (declare `Capability.logout` in `Driver.run`):
    /// sign the user out as the app would. The default answers `unsupported`.
    func logout() async -> DriverOutcome
    /// Called once after `shutdown`, when every call has been answered and
    /// before the client is dropped: release what it holds (a connection
    /// pool). Matters when attached, where the process serves case after
    /// case. The default does nothing.
    func close() async
}

extension DriverClient {
    public func close() async {}

    public func login(username: String, password: String, openID: Bool) async -> DriverOutcome {
        guard !openID else { return DriverOutcome(.unsupported, message: "this driver does not sign in with OpenID Connect") }
        return await login(username: username, password: password)
    }

    public func logout() async -> DriverOutcome {
        DriverOutcome(.unsupported, message: "this driver cannot sign out")
    }
}

/// What a driver says about itself in `hello`'s answer.
public struct DriverIdentity: Sendable {
    public var name: String
    public var version: String
    public var profiles: [String]
    /// Optional protocol extensions the client implements (`url`, `logout`, ...).
    public var capabilities: [String]
    /// Seconds before expiry the client renews a token, if it does (`renewalMargin`).
    public var renewalMargin: Double?

    public init(name: String, version: String, profiles: [String], capabilities: [String] = [], renewalMargin: Double? = nil) {
        self.name = name
        self.version = version
        self.profiles = profiles
        self.capabilities = capabilities
        self.renewalMargin = renewalMargin
    }
}

/// The driver side of the protocol (version 1), over either transport:
/// `run` reads JSON lines from stdin and exits after `shutdown`; `attach`
/// connects to `authmock run --attach` over a WebSocket and serves case
/// after case until the runner ends the run. Requests run concurrently;
/// every id is answered exactly once.
public enum Driver {
    /// The stdio transport. `capabilities` declares optional protocol
    /// extensions: pass `["url"]` once the client sends `request.target`
    /// (requests to another host). `renewalMargin`: seconds before expiry
    /// the client renews a token, if it renews by its clock with a margin.
    public static func run(
        name: String, version: String, profiles: [String], capabilities: [String] = [], renewalMargin: Double? = nil,
        makeClient: @escaping @Sendable (Hello) async throws -> any DriverClient
    ) async {
        let identity = DriverIdentity(name: name, version: version, profiles: profiles, capabilities: capabilities, renewalMargin: renewalMargin)
        // A runner that went away closes the pipe: writing then fails (EPIPE) and the driver exits quietly, not by the signal.
        signal(SIGPIPE, SIG_IGN)
        let output = LineWriter()
        let lines = AsyncStream<String> { continuation in
            Thread.detachNewThread {
                while let line = readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
        }
        if await serve(lines: lines, identity: identity, makeClient: makeClient, send: { output.send($0) }) == .shutDown { exit(0) }
    }

    /// How a conversation served by `serve(lines:)` ended.
    public enum End: Sendable {
        /// The runner sent `shutdown`, and it was answered.
        case shutDown
        /// The lines ended first (the runner went away).
        case linesEnded
    }

    /// One conversation whose lines the caller carries: each line the
    /// runner sent arrives through `lines`, each answer leaves through
    /// `send` as one line of JSON (no newline). The stdio transport is this
    /// over stdin and stdout; a runner in the same process (AuthmockTesting)
    /// carries the lines itself. Returns after `shutdown` is answered, or
    /// when `lines` ends, after cancelling the calls still running (they
    /// answer no one).
    public static func serve(
        lines: some AsyncSequence<String, Never> & Sendable, identity: DriverIdentity,
        makeClient: @escaping @Sendable (Hello) async throws -> any DriverClient,
        send: @escaping @Sendable (String) async -> Void
    ) async -> End {
        var conversation = Conversation(identity: identity, makeClient: makeClient) { await send($0.jsonLine) }
        return await withTaskGroup(of: Void.self) { group in
            for await line in lines {
                if await conversation.handle(line, in: &group) == .shutDown { return .shutDown }
            }
            group.cancelAll()
            return .linesEnded
        }
    }

    /// Free-form diagnostics: stderr is the driver's log.
    public static func log(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data((text + "\n").utf8))
    }
}

/// One driver conversation: the client `hello` makes, and the calls in
/// flight. `shutdown` is answered once every call has been.
struct Conversation: Sendable {
    enum Step { case goOn, shutDown }

    let identity: DriverIdentity
    let makeClient: @Sendable (Hello) async throws -> any DriverClient
    let send: @Sendable (DriverMessage) async -> Void
    private var client: (any DriverClient)?
    /// The calls still running, by request id: what `cancel` reaches.
    private let calls = CallsInFlight()

    init(
        identity: DriverIdentity, makeClient: @escaping @Sendable (Hello) async throws -> any DriverClient,
        send: @escaping @Sendable (DriverMessage) async -> Void
    ) {
        self.identity = identity
        self.makeClient = makeClient
        self.send = send
    }

    mutating func handle(_ line: String, in group: inout TaskGroup<Void>) async -> Step {
        guard let message = try? JSONDecoder().decode(RunnerMessage.self, from: Data(line.utf8)) else {
            Driver.log("ignoring a line that is not a protocol message: \(line.prefix(200))")
            return .goOn
        }
        let id = message.id
        let send = self.send
        switch message.operation {
        case .hello(let fields):
            let environment = ProcessInfo.processInfo.environment
            let hello = Hello(
                baseURL: fields.baseURL ?? environment["AUTHMOCK_BASE_URL"] ?? "",
                profile: fields.profile ?? environment["AUTHMOCK_PROFILE"] ?? "oauth2",
                clientID: fields.clientId ?? "demo", clientSecret: fields.clientSecret ?? "", dialect: fields.dialect,
                caCertificate: fields.caCertificate)
            do {
                await client?.close()
                client = try await makeClient(hello)
                await send(
                    .hello(
                        id: id, driver: identity.name, version: identity.version, profiles: identity.profiles, capabilities: identity.capabilities,
                        renewalMargin: identity.renewalMargin)
                )
            } catch {
                await send(DriverMessage(id: id, ok: false, message: "cannot create the client: \(error)"))
            }
        case .login(let fields):
            guard let client else { return await refuseBeforeHello(message) }
            let (username, password, openID) = (fields.username ?? "alice", fields.password ?? "", fields.openid ?? false)
            group.addTask { await send(Self.answer(id: id, await client.login(username: username, password: password, openID: openID))) }
        case .request(let fields):
            guard let client else { return await refuseBeforeHello(message) }
            let request = DriverRequest(
                method: fields.method ?? "GET", path: fields.path ?? "/", url: fields.url,
                headers: fields.headers ?? [:], body: fields.body, bodyStream: fields.bodyStream ?? false, instance: fields.instance ?? 1)
            // A task of its own, not the group's child: `cancel` ends one call, and a group cancels only all.
            let call = Task { await client.request(request) }
            let calls = self.calls
            calls.started(id, call)
            group.addTask {
                let outcome = await withTaskCancellationHandler {
                    await call.value
                } onCancel: {
                    call.cancel()
                }
                await send(Self.answer(id: id, calls.ended(id, outcome)))
            }
        case .cancel(let fields):
            // Answered at once: the cancelled call answers for itself (`cancelled`, or what it reached first).
            let known = calls.cancel(fields.call)
            await send(DriverMessage(id: id, ok: true, outcome: .ok, message: known ? nil : "no call \(fields.call) is in flight"))
        case .logout:
            guard let client else { return await refuseBeforeHello(message) }
            group.addTask { await send(Self.answer(id: id, await client.logout())) }
        case .shutdown:
            await group.waitForAll()
            await client?.close()
            client = nil
            await send(DriverMessage(id: id, ok: true))
            return .shutDown
        case .unknown(let op):
            await send(DriverMessage(id: id, ok: false, outcome: .unsupported, message: "unknown op \(op)"))
        }
        return .goOn
    }

    private func refuseBeforeHello(_ message: RunnerMessage) async -> Step {
        await send(DriverMessage(id: message.id, ok: false, outcome: .unsupported, message: "\(message.operation.name) before hello"))
        return .goOn
    }

    static func answer(id: String, _ outcome: DriverOutcome) -> DriverMessage {
        var answer = DriverMessage(
            id: id, ok: outcome.kind == .ok, outcome: outcome.kind, status: outcome.status, body: outcome.body, message: outcome.message)
        answer.idTokenClaims = outcome.idTokenClaims
        return answer
    }
}

/// The calls in flight by request id, and which of them the runner cancelled.
private final class CallsInFlight: Sendable {
    private struct State {
        var running: [String: Task<DriverOutcome, Never>] = [:]
        var cancelled = Set<String>()
    }
    private let state = Mutex(State())

    func started(_ id: String, _ call: Task<DriverOutcome, Never>) { state.withLock { $0.running[id] = call } }

    /// Cancels the call's task (Swift task cancellation: URLSession and
    /// AsyncHTTPClient stop its request); false when no such call is running.
    func cancel(_ id: String) -> Bool {
        let call: Task<DriverOutcome, Never>? = state.withLock {
            guard let call = $0.running[id] else { return nil }
            $0.cancelled.insert(id)
            return call
        }
        call?.cancel()
        return call != nil
    }

    /// What the call's answer says: a cancelled call that ended in a
    /// transport error (how HTTP clients report a cancelled request) is
    /// `cancelled`; one that got its answer first keeps it.
    func ended(_ id: String, _ outcome: DriverOutcome) -> DriverOutcome {
        let wasCancelled = state.withLock {
            $0.running[id] = nil
            return $0.cancelled.remove(id) != nil
        }
        guard wasCancelled, outcome.kind == .transportError else { return outcome }
        return DriverOutcome(.cancelled, message: outcome.message)
    }
}

/// Writes whole JSON lines to stdout, one at a time.
private final class LineWriter: Sendable {
    private let lock = NSLock()

    func send(_ line: String) {
        lock.withLock {
            do {
                try FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
            } catch {
                // Nobody reads the answers any more: the runner is gone. Exit as a driver whose stdin ended does.
                exit(0)
            }
        }
    }
}

extension DriverMessage {
    /// The message as one line of JSON (keys sorted, no escaped slashes).
    var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
