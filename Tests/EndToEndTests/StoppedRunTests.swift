import Foundation
import TestSupport
import Testing

/// `authmock run` stopped by a signal (a cancelled CI job, a `timeout`
/// wrapper) stops the drivers it started; a driver whose runner is gone
/// exits quietly. Left behind, sixty drivers at once were re-parented to
/// init and each crashed writing to the closed pipe, its crash handler
/// loading two cores for minutes.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct StoppedRunTests {
    /// The reference driver under a name of this test's own, so the
    /// processes left can be counted without touching anyone else's.
    static func uniqueDriver() throws -> (path: String, name: String) {
        let name = "authmock-ref-\(UUID().uuidString.prefix(8))"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: try referenceDriver())
        return (path, name)
    }

    static func running(_ name: String) async throws -> Int {
        let found = try await runProcess("pgrep", ["-f", name])
        return found.stdout.split(separator: "\n").count
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aStoppedRunStopsItsDrivers(signal: Int32) async throws {
        let driver = try Self.uniqueDriver()
        defer { try? FileManager.default.removeItem(atPath: driver.path) }
        let process = Process()
        process.executableURL = try authmockBinary()
        // Clock variants wait seconds of real time: the drivers are all there when the signal comes.
        process.arguments = ["run", "--driver", driver.path, "--case", "*-clock", "--jobs", "24"]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while try await Self.running(driver.name) < 8, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try await Self.running(driver.name) >= 8, "the run started too few drivers to judge")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + signal, "exit status \(process.terminationStatus)")
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(said.contains("stopped by signal \(signal)"), "\(said)")
        // Its drivers went with it (their process groups got SIGTERM, then SIGKILL).
        let gone = Date().addingTimeInterval(5)
        while try await Self.running(driver.name) > 0, Date() < gone { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try await Self.running(driver.name) == 0, "drivers left behind")
    }

    /// A driver whose runner vanished without a word: its stdin ends, or
    /// its stdout's reader is gone. It exits 0, with no crash report.
    @Test func aDriverWhoseRunnerIsGoneExitsQuietly() async throws {
        // The reader of its answers closes before the answer comes.
        // PIPESTATUS[0] is the driver's own status (a subshell around the pipe would report head's).
        let script =
            "\(try referenceDriver()) <<'EOF' | head -c 0\n{\"id\":\"1\",\"op\":\"hello\",\"baseURL\":\"http://127.0.0.1:9\",\"profile\":\"oauth2\",\"clientId\":\"demo\",\"clientSecret\":\"demo-secret\"}\nEOF\necho \"status ${PIPESTATUS[0]}\""
        let run = try await runProcess("/bin/bash", ["-c", script])
        #expect(run.stdout.contains("status 0"), "\(run.stdout) \(run.stderr)")
        #expect(!run.stderr.contains("Fatal error") && !run.stderr.contains("Crash"), "\(run.stderr)")
        // Its stdin ends without shutdown.
        let ended = try await runProcess("/bin/bash", ["-c", "\(try referenceDriver()) < /dev/null; echo \"status $?\""])
        #expect(ended.stdout.contains("status 0"), "\(ended.stdout) \(ended.stderr)")
    }

    /// The same for the other languages' protocol loops (the Python helper,
    /// Node's, Ruby's, Perl's, Rust's, built by scripts/test.sh): Node's died
    /// on an unhandled EPIPE with a stack trace, Ruby's and Perl's by SIGPIPE.
    @Test(arguments: [
        "python3 drivers/python-authlib/driver.py", "node drivers/node-axios/driver.js", "ruby drivers/ruby-oauth2/driver.rb",
        "perl drivers/perl-net-oauth2/driver.pl", ".build/rust-oauth2/release/authmock-rust-oauth2-driver",
    ])
    func anotherLanguagesDriverWhoseRunnerIsGoneExitsQuietly(command: String) async throws {
        let hello = #"{"id":"1","op":"hello","baseURL":"http://127.0.0.1:9","profile":"oauth2","clientId":"demo","clientSecret":"demo-secret"}"#
        // Two hellos a moment apart: the second answer meets the closed pipe whatever the first did.
        // The feeder's own complaint (its second echo finds the driver gone) is silenced: only the driver's stderr is judged.
        let script =
            "cd '\(repositoryRoot.path)' && { echo '\(hello)'; sleep 1; echo '\(hello)'; sleep 1; } 2>/dev/null | \(command) | head -c 0; echo \"status ${PIPESTATUS[1]}\""
        let run = try await runProcess("/bin/bash", ["-c", script])
        #expect(run.stdout.contains("status 0"), "\(command): \(run.stdout) \(run.stderr)")
        #expect(
            !run.stderr.contains("EPIPE") && !run.stderr.contains("Traceback") && !run.stderr.contains("Broken pipe"), "\(command): \(run.stderr)")
    }
}
