import Foundation

/// How the runner reaches the client under test, once per conversation (the
/// run's `hello` probe, then each case): a child process per case over stdio
/// and clients attached over a WebSocket (`AuthmockTransports`, which the
/// CLI links), or a client in the runner's own process (`AuthmockTesting`,
/// which a test target links). The runner core starts no process and
/// listens on no socket of its own for it.
public protocol DriverTransport: Sendable {
    /// Seconds the probe keeps asking `hello` when a client breaks the
    /// conversation instead of answering (an attached app restarting: the
    /// next client to attach is asked); 0 asks once.
    var helloPatience: Double { get }
    /// The client learns which capabilities it has only as it answers
    /// `hello` (an attached client: no probe ran on it), so a declared
    /// dialect's description goes to it unasked.
    var capabilitiesArriveWithHello: Bool { get }
    /// A conversation starts a process: starts pass the run's startup gate,
    /// one per core.
    var startsProcesses: Bool { get }
    /// Runs `body` over a fresh conversation with the client and ends it;
    /// `log` is what the report shows beside the verdict (the driver's
    /// stderr, which client served the case).
    func converse<T: Sendable>(
        environment: [String: String], _ body: @escaping @Sendable (DriverChannel) async throws -> T
    ) async -> (result: Result<T, any Error>, log: String)
}

extension DriverTransport {
    public var helloPatience: Double { 0 }
    public var capabilitiesArriveWithHello: Bool { false }
    public var startsProcesses: Bool { false }
}
