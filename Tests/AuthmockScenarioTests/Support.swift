import AuthmockDialect
import AuthmockCore
import AuthmockScenario
import AuthmockServer
import Foundation
import HummingbirdTesting
import Logging
import TestSupport
import Testing

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The reference driver binary built next to the test bundle.
func referenceDriver() throws -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
    for candidate in [directory, directory.deletingLastPathComponent()] {
        let binary = candidate.appendingPathComponent("authmock-reference-driver")
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary.path }
    }
    throw DriverMissing()
}

struct DriverMissing: Error {}

/// Every built-in scenario, once per dialect it names.
func builtInCases() throws -> [(Scenario, String)] {
    let files = try ScenarioLoader.files(in: [packageRoot.appendingPathComponent("scenarios").path])
    return try files.flatMap { try ScenarioLoader.load(file: $0).withVariants }.flatMap { scenario in scenario.profiles.map { (scenario, $0) } }
}

func scenario(_ yaml: String, file: String = "test.yaml") throws -> Scenario {
    try ScenarioLoader.parse(yaml, file: file)
}

/// Runs a Python snippet (`python3 -c`) with arguments; its exit status and output.
func runPython(_ script: String, _ arguments: String...) async throws -> (status: Int32, output: String) {
    let run = try await runProcess("python3", ["-c", script] + arguments, mergeOutput: true)
    return (run.status, run.stdout)
}

/// `dialect` served in process (no port, a fixed key): the mock, and a client of its routes.
func withDialectServed(
    _ dialect: LoadedDialect, directory: Directory = Directory(), configure: (inout ServerOptions) -> Void = { _ in },
    _ body: @Sendable (Authmock, any TestClientProtocol) async throws -> Void
) async throws {
    var options = ServerOptions(directory: directory, signingKey: try SigningKey(secret: String(repeating: "s", count: 32)))
    dialect.apply(to: &options)
    configure(&options)
    let mock = try await Authmock(options: options)
    var logger = Logger(label: "authmock-test")
    logger.logLevel = .warning
    try await AuthmockApplication.make(mock: mock, logger: logger).test(.router) { client in try await body(mock, client) }
}
