public import AuthmockDialect
public import AuthmockModel
public import AuthmockServer
import Foundation

/// How `authmock run` runs the suite.
public struct RunOptions: Sendable {
    /// How the runner reaches the client: a process per case, attached
    /// clients, a client in this process.
    public var transport: any DriverTransport
    /// Cases run at once; each has its own server and driver.
    public var jobs: Int
    /// Case ids (`1.1`, or `1.1 [DIALECT]`) the driver is known to fail, with the reason.
    public var expectedFailures: [String: String]
    public var environment: [String: String]
    /// What the driver said in `hello`, learnt once per run: cases it cannot
    /// run are SKIP without starting it again.
    public var driverInfo: DriverInfo?
    /// Where each case's server listens, and the host name it gives clients
    /// (attach mode: a device or emulator reaches the machine by another name).
    public var caseServerHost = "127.0.0.1"
    public var caseServerAdvertisedHost: String?
    /// Browser origins the case servers allow (attach mode: the page's).
    public var caseServerCORS = ""
    /// Where each case server keeps token state (`authmock run --state`).
    public var caseServerState = CaseServerState.memory
    /// Opens a case server's state; the second argument is PostgreSQL's
    /// deadline in seconds when the URL sets none. The runner links no
    /// database driver: the CLI passes its own opener, and without one only
    /// `memory` opens.
    public var openState: @Sendable (ServerOptions, Double) async throws -> ServerState = RunOptions.memoryState
    /// What each case's steps steer its server with (the clock, faults,
    /// expiry, the journal): the server in this process by default. Any
    /// `MockSteering` does, such as a `ControlClient` at the case server's
    /// `baseURL`, which steers it over the control API as a runner in another
    /// process would (the runner links no HTTP control client).
    public var steering: @Sendable (Authmock) -> any MockSteering = { $0.control }
    /// Serve every case over HTTPS (`authmock run --tls`); a driver that
    /// declares the `tls` capability gets it without asking.
    public var servesTLS = false
    /// The run's certificate, made by `ScenarioRunner.run` when its cases are served over HTTPS.
    var caseServerTLS: CaseServerTLS?
    /// Declared dialects (`--dialect`) by name: a case run whose dialect is
    /// one of them is served from its file.
    public var dialects: [String: LoadedDialect] = [:]
    /// Driver starts at once (up to `hello`): one per core. Set by `run`.
    var startups: StartupGate?

    /// Case runs at once by default: 32 per core. A case mostly waits (held
    /// requests, quiet periods, client clocks), and driver starts pass the
    /// startup gate one per core (bench/README.md, "The suite's wall time").
    public static var defaultJobs: Int { 32 * ProcessInfo.processInfo.activeProcessorCount }

    /// The default `openState`: in-memory state only.
    public static let memoryState: @Sendable (ServerOptions, Double) async throws -> ServerState = { options, _ in
        guard options.state == "memory" else {
            throw StartError("--state \(options.state): this runner has no database drivers (the authmock CLI has them)")
        }
        return .memory(options)
    }

    public init(
        transport: any DriverTransport, jobs: Int = RunOptions.defaultJobs, expectedFailures: [String: String] = [:],
        environment: [String: String] = [:]
    ) {
        self.transport = transport
        self.jobs = max(1, jobs)
        self.expectedFailures = expectedFailures
        self.environment = environment
    }
}

/// The certificate every case server of a run presents, and the file a
/// stdio driver finds it in (`AUTHMOCK_CA_FILE`): self-signed for
/// 127.0.0.1 and localhost (the second host name cases call), plus the
/// advertised host of attach mode.
struct CaseServerTLS: Sendable {
    var identity: TLSIdentity
    var certificateFile: String

    /// Makes a certificate and writes it to a file of its own; `discard()` removes it.
    static func make(extraNames: [String] = []) throws -> CaseServerTLS {
        let identity = try TLSIdentity.selfSigned(extraNames: extraNames)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-run-\(UUID().uuidString.prefix(8)).crt")
        try identity.certificatePEM.write(to: file, atomically: true, encoding: .utf8)
        return CaseServerTLS(identity: identity, certificateFile: file.path)
    }

    func discard() { try? FileManager.default.removeItem(atPath: certificateFile) }
}

/// The token store of the case servers: a whole suite run against each
/// store shows a store changes where state lives, not what clients see.
public enum CaseServerState: Sendable, Equatable {
    case memory
    /// A fresh SQLite file per case server, removed after it.
    case sqlite
    /// Tables of their own per case server in this database, dropped after it.
    case postgres(url: String)

    /// `memory`, `sqlite` or a `postgres://` URL.
    public init?(_ text: String) {
        switch text {
        case "memory": self = .memory
        case "sqlite": self = .sqlite
        case _ where text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"): self = .postgres(url: text)
        default: return nil
        }
    }

    func configure(_ options: inout ServerOptions) {
        let unique = UUID().uuidString.lowercased().prefix(8)
        switch self {
        case .memory: break
        case .sqlite: options.state = "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("authmock-case-\(unique).db").path
        case .postgres(let url):
            options.state = url
            options.stateTablePrefix = "authmock_c\(unique)_"
        }
    }

    /// Removes what a case server kept.
    static func discard(_ mock: Authmock) async {
        await mock.discardState()
        let state = mock.options.state
        guard state.hasPrefix("sqlite:") else { return }
        let path = String(state.dropFirst("sqlite:".count))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
