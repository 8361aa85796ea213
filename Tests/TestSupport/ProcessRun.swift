public import Foundation

/// A child process that ran to completion.
public struct ProcessRun: Sendable {
    public var status: Int32
    public var stdout: String
    /// Empty when the run merged stderr into stdout.
    public var stderr: String
}

/// Runs `executable` with `arguments` to completion. A bare program name is
/// looked up on PATH (through /usr/bin/env). `mergeOutput` sends stderr into
/// the same pipe as stdout, so the text keeps its order; `stdin`, what the
/// child reads (nil: the caller's standard input, as before). Waits on a thread
/// of its own: a test waiting for a child on one of Swift concurrency's
/// threads (two on a two-core machine) would stall every other test's
/// async work (in-process servers, case runs) until the child ends.
public func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, mergeOutput: Bool = false,
    directory: URL? = nil
) async throws -> ProcessRun {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(
                with: Result {
                    try waitForProcess(executable, arguments, environment: environment, stdin: stdin, mergeOutput: mergeOutput, directory: directory)
                })
        }.start()
    }
}

/// `runProcess`, waiting on the calling thread.
func waitForProcess(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, mergeOutput: Bool = false,
    directory: URL? = nil
) throws -> ProcessRun {
    let process = Process()
    if let directory { process.currentDirectoryURL = directory }
    if executable.hasPrefix("/") {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
    }
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = mergeOutput ? out : Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = stdin.map { _ in Pipe() }
    if let input { process.standardInput = input }
    try process.run()
    // Small inputs only (a few lines): written whole before the output is read.
    if let input, let stdin {
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
    }
    // Read stderr on its own thread so a chatty child cannot fill one pipe while we wait on the other.
    let errors = ErrorText()
    let reader = mergeOutput ? nil : Thread { errors.text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
    reader?.start()
    let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    while reader != nil && !errors.done { Thread.sleep(forTimeInterval: 0.005) }
    return ProcessRun(status: process.terminationStatus, stdout: stdout, stderr: errors.text)
}

private final class ErrorText: @unchecked Sendable {
    private let lock = NSLock()
    private var value = ""
    private var finished = false
    var text: String {
        get { lock.withLock { value } }
        set {
            lock.withLock {
                value = newValue; finished = true
            }
        }
    }
    var done: Bool { lock.withLock { finished } }
}
