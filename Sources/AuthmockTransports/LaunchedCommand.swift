import Foundation
import Subprocess
import SystemPackage

/// `authmock run --attach --launch CMD`: a command (a headless browser
/// opening the page, an emulator's test run) that lives while the cases run.
/// It runs in its own process group, so a wrapper script's children (a
/// browser's renderers) go with it at the end.
public enum LaunchedCommand {
    /// Runs `command` around `body`; `body` gets nil when it could not start.
    public static func around<T: Sendable>(
        command: String, environment: [String: String], _ body: @escaping @Sendable (_ startError: String?) async -> T
    ) async -> T {
        var options = PlatformOptions()
        options.processGroupID = 0
        var updates: [Environment.Key: String?] = [:]
        for (key, value) in environment { updates[Environment.Key(stringLiteral: key)] = value }
        let configuration = Configuration(
            executable: .path("/bin/sh"), arguments: ["-c", command], environment: .inherit.updating(updates), platformOptions: options)
        let box = LaunchBox<T>()
        do {
            _ = try await run(configuration, input: .none, output: .discarded, error: .discarded) { execution in
                box.value = await body(nil)
                await execution.teardown(using: [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(3))])
            }
        } catch {
            if box.value == nil { return await body("cannot start \(command): \(error)") }
        }
        if let value = box.value { return value }
        return await body("cannot start \(command)")
    }
}

private final class LaunchBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: T?
    var value: T? {
        get { lock.withLock { _value } }
        set { lock.withLock { _value = newValue } }
    }
}
