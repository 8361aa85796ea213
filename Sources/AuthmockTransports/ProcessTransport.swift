public import AuthmockScenario
import Foundation
import Synchronization
import Subprocess
import SystemPackage

/// `authmock run --driver CMD`: each conversation is a fresh child process
/// of `CMD` (through `/bin/sh -c`), protocol lines on its stdin and stdout,
/// its stderr the report's driver log.
public struct ProcessTransport: DriverTransport {
    public var command: String

    public init(command: String) { self.command = command }

    public var startsProcesses: Bool { true }

    public func converse<T: Sendable>(
        environment: [String: String], _ body: @escaping @Sendable (DriverChannel) async throws -> T
    ) async -> (result: Result<T, any Error>, log: String) {
        let (result, stderr) = await DriverProcess.with(command: command, environment: environment, body)
        return (result, stderr)
    }
}

extension RunOptions {
    /// Options that run `command` as the driver, a fresh process per case.
    public init(
        driver command: String, jobs: Int = RunOptions.defaultJobs, expectedFailures: [String: String] = [:],
        environment: [String: String] = [:]
    ) {
        self.init(transport: ProcessTransport(command: command), jobs: jobs, expectedFailures: expectedFailures, environment: environment)
    }
}

/// Starts a driver command in its own process group, runs `body` with the
/// channel, then shuts the driver down and kills whatever is left of its group.
enum DriverProcess {
    static func with<T: Sendable>(
        command: String, environment: [String: String], stderrLog: @escaping @Sendable (String) -> Void = { _ in },
        _ body: @escaping @Sendable (DriverChannel) async throws -> T
    ) async -> (result: Result<T, any Error>, stderr: String) {
        var options = PlatformOptions()
        options.processGroupID = 0
        options.teardownSequence = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(2))]
        var updates: [Environment.Key: String?] = [:]
        for (key, value) in environment { updates[Environment.Key(stringLiteral: key)] = value }
        let configuration = Configuration(
            executable: .path("/bin/sh"), arguments: ["-c", command],
            environment: .inherit.updating(updates), platformOptions: options)
        let box = ResultBox<T>()
        do {
            _ = try await run(configuration, input: .inputWriter, output: .sequence, error: .sequence) { execution in
                let group = execution.processIdentifier.value
                LiveDrivers.started(group)
                defer { LiveDrivers.ended(group) }
                let writer = execution.standardInputWriter
                let channel = DriverChannel { line in
                    do {
                        _ = try await writer.write(line)
                    } catch {
                        // A driver that died cannot be written to: say that, not "broken pipe".
                        throw DriverFailure.exitedEarly(status: "its standard input is closed")
                    }
                }
                await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await line in execution.standardOutput.strings() { await channel.received(line) }
                        await channel.ended(status: "its standard output closed")
                    }
                    group.addTask {
                        for try await line in execution.standardError.strings() {
                            await channel.stderr(line)
                            stderrLog(line)
                        }
                    }
                    do {
                        box.value = try await body(channel)
                    } catch {
                        box.error = error
                    }
                    try? await writer.finish()
                    // Whatever the driver left running (children included) goes with its group.
                    await execution.teardown(using: [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(2))])
                    // Let the readers drain what the driver wrote last (its dying words),
                    // but not wait on a pipe some escaped grandchild still holds.
                    group.addTask {
                        try await Task.sleep(for: .seconds(1)); throw CancellationError()
                    }
                    _ = try? await group.next()
                    _ = try? await group.next()
                    group.cancelAll()
                    box.stderr = await channel.stderrText
                }
            }
        } catch {
            if box.value == nil && box.error == nil { return (.failure(DriverFailure.cannotStart("\(error)")), box.stderr) }
        }
        if let error = box.error { return (.failure(error), box.stderr) }
        guard let value = box.value else { return (.failure(DriverFailure.cannotStart("no result")), box.stderr) }
        return (.success(value), box.stderr)
    }
}

/// Carries the body's result out of the subprocess closure.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: T?
    private var _error: (any Error)?
    private var _stderr = ""
    var value: T? {
        get { lock.withLock { _value } }
        set { lock.withLock { _value = newValue } }
    }
    var error: (any Error)? {
        get { lock.withLock { _error } }
        set { lock.withLock { _error = newValue } }
    }
    var stderr: String {
        get { lock.withLock { _stderr } }
        set { lock.withLock { _stderr = newValue } }
    }
}

/// The process groups of the drivers running now. A run stopped by a signal
/// (a CI job cancelled, a `timeout` wrapper) stops them before it exits:
/// left behind, each would be re-parented to init and crash writing to the
/// runner's closed pipe, sixty at a time.
public enum LiveDrivers {
    private struct State {
        var groups = Set<pid_t>()
        /// Set once a stop began: a driver that starts after it is killed at once.
        var stopping = false
    }
    private static let state = Mutex(State())

    static func started(_ group: pid_t) {
        let stopping = state.withLock { state in
            state.groups.insert(group)
            return state.stopping
        }
        if stopping { kill(-group, SIGKILL) }
    }

    static func ended(_ group: pid_t) { _ = state.withLock { $0.groups.remove(group) } }

    /// How many drivers run now.
    public static var count: Int { state.withLock { $0.groups.count } }

    /// SIGTERM to every driver's process group, then SIGKILL to the groups
    /// still there after `grace` seconds; a driver started meanwhile is
    /// killed as it starts. Returns how many were stopped.
    @discardableResult
    public static func stopAll(grace: Double = 2) -> Int {
        let running = state.withLock { state in
            state.stopping = true
            return Array(state.groups)
        }
        for group in running { kill(-group, SIGTERM) }
        let deadline = Date().addingTimeInterval(grace)
        var left = running
        while !left.isEmpty, Date() < deadline {
            usleep(20_000)
            left = left.filter { kill(-$0, 0) == 0 }
        }
        for group in left { kill(-group, SIGKILL) }
        // Any that started while the others were asked to go.
        let late = state.withLock { Array($0.groups.subtracting(running)) }
        for group in late { kill(-group, SIGKILL) }
        return running.count + late.count
    }
}
