public import Logging
import ServiceLifecycle

/// A mock serving HTTP in this process until `stop()`: the runner's case
/// servers, and the mocks a test starts (AuthmockTesting).
public final class RunningMock: Sendable {
    public let mock: Authmock
    private let services: ServiceGroup
    private let server: Task<Void, any Error>
    /// Run once it has stopped (a proxy's HTTP client shut down).
    private let onStop: (@Sendable () async -> Void)?

    /// Where clients reach it (`http://127.0.0.1:PORT`), the port bound.
    public var baseURL: String { mock.baseURL }
    /// Steers and reads it: the clock, faults, revocation, the journal.
    public var control: MockControl { mock.control }
    /// What it was started with: its dialect, token settings, users.
    public var options: ServerOptions { mock.options }

    private init(mock: Authmock, services: ServiceGroup, server: Task<Void, any Error>, onStop: (@Sendable () async -> Void)?) {
        self.mock = mock
        self.services = services
        self.server = server
        self.onStop = onStop
    }

    /// Starts serving `mock` and returns once it listens (port 0: a free one).
    /// `forwarder`: a proxy's (`mock` made with `options.upstream`), which
    /// answers what the mock does not; `onStop` runs once it has stopped.
    public static func start(
        _ mock: Authmock, logger: Logger? = nil, forwarder: Forwarder? = nil, onStop: (@Sendable () async -> Void)? = nil
    ) async throws -> RunningMock {
        do {
            return try await serve(mock, logger: logger, forwarder: forwarder, onStop: onStop)
        } catch {
            // What it would have stopped (a proxy's HTTP client) stops with the failed start.
            await onStop?()
            throw error
        }
    }

    private static func serve(
        _ mock: Authmock, logger: Logger?, forwarder: Forwarder?, onStop: (@Sendable () async -> Void)?
    ) async throws -> RunningMock {
        let logger =
            logger
            ?? {
                var quiet = Logger(label: "authmock")
                quiet.logLevel = .critical
                return quiet
            }()
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = try AuthmockApplication.make(
            mock: mock, logger: logger, forwarder: forwarder,
            onListening: { port in
                listening.yield(port)
                listening.finish()
            })
        // Stopped gracefully (listener closed first, then open connections
        // drained), never by cancellation, which can race a late connection.
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let server = Task {
            defer { listening.finish() }
            try await services.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard await iterator.next() != nil else {
            if case .failure(let error) = await server.result { throw StartError("the mock did not start: \(error)") }
            throw StartError("the mock did not start")
        }
        return RunningMock(mock: mock, services: services, server: server, onStop: onStop)
    }

    /// Stops listening, lets open connections finish, and returns when it has stopped.
    public func stop() async {
        await services.triggerGracefulShutdown()
        _ = await server.result
        await onStop?()
    }
}
