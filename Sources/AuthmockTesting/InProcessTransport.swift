import AuthmockScenario
import DriverKit
import Synchronization

/// The runner's conversation with a client in its own process: the same
/// protocol lines as a driver process's stdin and stdout, carried in memory
/// to DriverKit's `Driver.serve(lines:)`, so an adapter's answers are
/// checked as strictly as a driver's.
struct InProcessTransport: DriverTransport {
    let client: ClientUnderTest
    /// How long the end of a conversation waits for calls still running
    /// (cancelled) before the case goes on without them.
    static let drainSeconds = 2.0

    func converse<T: Sendable>(
        environment: [String: String], _ body: @escaping @Sendable (DriverChannel) async throws -> T
    ) async -> (result: Result<T, any Error>, log: String) {
        let (lines, toClient) = AsyncStream.makeStream(of: String.self)
        let channel = DriverChannel { line in toClient.yield(line) }
        let client = self.client
        let served = Task {
            _ = await Driver.serve(lines: lines, identity: client.identity, makeClient: client.makeClient) { await channel.received($0) }
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(channel))
        } catch {
            result = .failure(error)
        }
        toClient.finish()
        // A call that ignores cancellation would hold the case forever:
        // it is left running, and the report says so.
        let drained = await Self.finished(served, within: Self.drainSeconds)
        let log = drained ? "" : "calls still running \(Self.drainSeconds) s after the case ended were left running (cancelled, not finished)"
        return (result, log)
    }

    /// Whether `task` ends within `seconds`; the waiting stops either way.
    static func finished(_ task: Task<Void, Never>, within seconds: Double) async -> Bool {
        let first = FirstAnswer()
        return await withCheckedContinuation { continuation in
            first.waiting(continuation)
            Task {
                await task.value
                first.resume(true)
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                first.resume(false)
            }
        }
    }
}

/// A continuation resumed by whichever answer comes first.
private final class FirstAnswer: Sendable {
    private let continuation = Mutex<CheckedContinuation<Bool, Never>?>(nil)

    func waiting(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation.withLock { $0 = continuation } }

    func resume(_ value: Bool) { continuation.withLock { $0.take() }?.resume(returning: value) }
}
