// A driver imports only DriverKit: the protocol's vocabulary (outcome kinds,
// profile names) comes with it.
@_exported import DriverProtocol
import Foundation

/// The values `hello` brings: where the server is and who the client is.
public struct Hello: Sendable {
    public var baseURL: String
    public var profile: String
    public var clientID: String
    public var clientSecret: String
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
}

/// What the application finally saw.
public struct DriverOutcome: Sendable {
    /// The protocol's outcome kinds (`ok`, `http_error`, `reauth_required`, ...).
    public typealias Kind = OutcomeKind
    public var kind: Kind
    public var status: Int?
    public var body: String?
    public var message: String?

    public init(_ kind: Kind, status: Int? = nil, body: String? = nil, message: String? = nil) {
        self.kind = kind
        self.status = status
        self.body = body
        self.message = message
    }

    public static func ok(status: Int, body: String?) -> Self { .init(.ok, status: status, body: body) }
}

/// What a driver wraps: one client library, signed in through `login` and
/// making the runner's calls through `request`. Calls arrive concurrently.
public protocol DriverClient: Sendable {
    func login(username: String, password: String) async -> DriverOutcome
    func request(_ request: DriverRequest) async -> DriverOutcome
    /// The `logout` extension (declare `Capability.logout` in `Driver.run`):
    /// sign the user out as the app would. The default answers `unsupported`.
    func logout() async -> DriverOutcome
}

extension DriverClient {
    public func logout() async -> DriverOutcome {
        DriverOutcome(.unsupported, message: "this driver cannot sign out")
    }
}

/// The driver side of the stdio protocol (version 1): reads JSON lines from
/// stdin, runs requests concurrently, answers each id exactly once on stdout,
/// and exits after `shutdown`. A driver is `Driver.run(...)` plus a client.
/// `capabilities` declares optional protocol extensions: pass `["url"]`
/// once the client sends `request.target` (requests to another host).
public enum Driver {
    public static func run(
        name: String, version: String, profiles: [String], capabilities: [String] = [],
        makeClient: @escaping @Sendable (Hello) async throws -> any DriverClient
    ) async {
        let output = LineWriter()
        let lines = AsyncStream<String> { continuation in
            Thread.detachNewThread {
                while let line = readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
        }
        var client: (any DriverClient)?
        await withTaskGroup(of: Void.self) { group in
            for await line in lines {
                guard let message = try? JSONDecoder().decode(RunnerMessage.self, from: Data(line.utf8)) else {
                    log("ignoring a line that is not a protocol message: \(line.prefix(200))")
                    continue
                }
                let id = message.id
                switch message.op {
                case "hello":
                    let environment = ProcessInfo.processInfo.environment
                    let hello = Hello(
                        baseURL: message.baseURL ?? environment["AUTHMOCK_BASE_URL"] ?? "",
                        profile: message.profile ?? environment["AUTHMOCK_PROFILE"] ?? "oauth2",
                        clientID: message.clientId ?? "demo", clientSecret: message.clientSecret ?? "")
                    do {
                        client = try await makeClient(hello)
                        output.send(.hello(id: id, driver: name, version: version, profiles: profiles, capabilities: capabilities))
                    } catch {
                        output.send(DriverMessage(id: id, ok: false, message: "cannot create the client: \(error)"))
                    }
                case "login", "request":
                    guard let client else {
                        output.send(DriverMessage(id: id, ok: false, outcome: .unsupported, message: "\(message.op) before hello"))
                        continue
                    }
                    let request = DriverRequest(
                        method: message.method ?? "GET", path: message.path ?? "/", url: message.url,
                        headers: message.headers ?? [:], body: message.body, bodyStream: message.bodyStream ?? false)
                    let (isLogin, username, password) = (message.op == "login", message.username ?? "alice", message.password ?? "")
                    group.addTask {
                        let outcome = isLogin ? await client.login(username: username, password: password) : await client.request(request)
                        output.send(answer(id: id, outcome))
                    }
                case "logout":
                    guard let client else {
                        output.send(DriverMessage(id: id, ok: false, outcome: .unsupported, message: "logout before hello"))
                        continue
                    }
                    group.addTask { output.send(answer(id: id, await client.logout())) }
                case "shutdown":
                    await group.waitForAll()
                    output.send(DriverMessage(id: id, ok: true))
                    exit(0)
                default:
                    output.send(DriverMessage(id: id, ok: false, outcome: .unsupported, message: "unknown op \(message.op)"))
                }
            }
        }
    }

    static func answer(id: String, _ outcome: DriverOutcome) -> DriverMessage {
        DriverMessage(id: id, ok: outcome.kind == .ok, outcome: outcome.kind, status: outcome.status, body: outcome.body, message: outcome.message)
    }

    /// Free-form diagnostics: stderr is the driver's log.
    public static func log(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// Writes whole JSON lines to stdout, one at a time.
private final class LineWriter: Sendable {
    private let lock = NSLock()

    func send(_ message: DriverMessage) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(message) else { return }
        lock.withLock { FileHandle.standardOutput.write(data + Data("\n".utf8)) }
    }
}
