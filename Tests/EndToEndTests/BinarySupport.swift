import Foundation
import TestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The `authmock` executable built next to this test bundle.
func authmockBinary() throws -> URL {
    if let override = ProcessInfo.processInfo.environment["AUTHMOCK_BIN"] { return URL(fileURLWithPath: override) }
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
    for candidate in [directory, directory.deletingLastPathComponent()] {
        let binary = candidate.appendingPathComponent("authmock")
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
    }
    throw BinaryError("no authmock binary next to \(CommandLine.arguments[0]); set AUTHMOCK_BIN")
}

struct BinaryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs the real binary to completion and returns its exit status and output.
/// `directory`: where it runs (default: the test's own working directory).
/// Waits on a thread of its own: a run of the suite takes minutes, and
/// waiting on one of Swift concurrency's threads (two on a two-core
/// machine) would stall every other test's async work meanwhile.
func runAuthmock(
    _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil
) async throws -> (status: Int32, stdout: String, stderr: String) {
    let binary = try authmockBinary().path
    let run = try await runProcess(binary, arguments, environment: environment, directory: directory)
    return (run.status, run.stdout, run.stderr)
}

/// `authmock serve` on a free port, for the length of `body`.
final class ServingBinary: @unchecked Sendable {
    let process = Process()
    let port: Int
    let banner: String
    private let stdout = Pipe()
    private let stderr = Pipe()

    /// `command`: `serve`, or `proxy` (whose banner ends with the control API's line).
    init(_ arguments: [String] = [], environment: [String: String] = [:], command: String = "serve") throws {
        process.executableURL = try authmockBinary()
        process.arguments = [command, "--port", "0"] + arguments
        let last = command == "serve" ? "\nRefresh" : "\ncontrol API"
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // The banner's first line names the bound port; everything after is hints.
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains(last) || !text.hasSuffix("\n") {
            guard Date() < deadline, process.isRunning else {
                process.terminate()
                throw BinaryError("authmock \(command) did not start: \(text)")
            }
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { Thread.sleep(forTimeInterval: 0.01) }
            text += String(decoding: chunk, as: UTF8.self)
        }
        banner = text
        guard let match = text.firstMatch(of: /listening on https?:\/\/127\.0\.0\.1:(\d+)/), let port = Int(match.1) else {
            process.terminate()
            throw BinaryError("no port in banner: \(text)")
        }
        self.port = port
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// SIGINT, as a developer's Ctrl-C; returns the exit status and stderr.
    func interrupt() -> (status: Int32, stderr: String) {
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    /// What the process printed after its banner, once it has exited.
    func remainingOutput() -> String {
        process.waitUntilExit()
        return String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    func withClient<T: Sendable>(_ body: @escaping @Sendable (TestClient) async throws -> T) async throws -> T {
        try await TestClient.withClient(host: "127.0.0.1", port: port, operation: body)
    }
}

extension TestClient {
    func form(_ uri: String, _ body: String, basic: String = "demo:demo-secret") async throws -> TestClient.Response {
        try await post(
            uri,
            headers: [
                .contentType: "application/x-www-form-urlencoded",
                .authorization: "Basic " + Data(basic.utf8).base64EncodedString(),
            ], body: ByteBuffer(string: body))
    }
}

extension TestClient.Response {
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: body ?? ByteBuffer())) as? [String: Any])
    }
}

/// The reference client's driver, built beside `authmock`.
func referenceDriver() throws -> String {
    try authmockBinary().deletingLastPathComponent().appendingPathComponent("authmock-reference-driver").path
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw BinaryError("no free port") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The checkout's root: scenarios/, drivers/, scripts/.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The built-in dialects written as files: the names of dialects/NAME.yaml, sorted.
let builtInDialectFiles: [String] =
    ((try? FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("dialects").path)) ?? [])
    .filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(5)) }.sorted()

/// A real server from a Python fixture (Tests/EndToEndTests/Fixtures/): it
/// binds a free loopback port and prints one JSON line first (its port and
/// whatever else the test needs). `defer { server.stop() }` keeps it to the end.
final class FixtureServer: @unchecked Sendable {
    let process = Process()
    /// The first line, parsed.
    let started: [String: Any]
    var port: Int { started["port"] as? Int ?? 0 }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `needs`: what scripts/test.sh installs for it, said when it does not start.
    init(_ fixture: String, _ arguments: [String] = [], needs: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/\(fixture)").path] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        // A server that reads its stdin ends when it closes (a launcher between
        // us and the interpreter kept SIGTERM from it): `stop`, or this process's end.
        process.standardInput = input
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += chunk
        }
        guard let started = try? JSONSerialization.jsonObject(with: line) as? [String: Any], started["port"] is Int else {
            process.terminate()
            let why = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw BinaryError("\(fixture) did not start (scripts/test.sh installs \(needs)): \(why)")
        }
        self.started = started
    }

    private let input = Pipe()

    func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
    }
}
