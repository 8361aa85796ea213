import Foundation
import Testing

/// The drivers for real client libraries run through the whole suite with
/// their expected-failures files: nothing new fails and nothing errors.
@Suite(.serialized) struct LibraryDriverTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs the oauth2 cases with `driver` and the directory's expected-failures file.
    func expectOnlyKnownFailures(driver: String, directory: String, jobs: Int = 4) throws {
        let result = try runAuthmock([
            "run", Self.root.appendingPathComponent("scenarios").path, "--driver", driver,
            "--expected-failures", Self.root.appendingPathComponent("drivers/\(directory)/expected-failures.yaml").path,
            "--profile", "oauth2", "--jobs", String(jobs),
        ])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        // "failed" counts FAIL and ERROR.
        #expect(result.stdout.contains(" 0 failed"), "\(result.stdout)")
    }

    /// A driver run by an interpreter: its directory, the command and script,
    /// and a file the library installs (scripts/test.sh installs them all).
    struct ScriptDriver: Sendable, CustomTestStringConvertible {
        var directory: String
        var interpreter: String
        var script: String
        var library: String?
        var testDescription: String { directory }
    }

    static let scriptDrivers: [ScriptDriver] =
        ["python-authlib", "python-requests-oauthlib", "python-gql", "python-google-auth", "python-requests-oauth2client"].map {
            ScriptDriver(directory: $0, interpreter: "python3", script: "driver.py")
        } + [
            // axios from Debian's node-axios, running drivers/browser's recipe file in Node.
            ScriptDriver(directory: "node-axios", interpreter: "node", script: "driver.js", library: "/usr/share/nodejs/axios/package.json"),
            ScriptDriver(directory: "ruby-oauth2", interpreter: "ruby", script: "driver.rb", library: "/usr/lib/ruby/vendor_ruby/oauth2.rb"),
            ScriptDriver(
                directory: "perl-lwp-authen-oauth2", interpreter: "perl", script: "driver.pl", library: "/usr/share/perl5/LWP/Authen/OAuth2.pm"),
        ]

    @Test(arguments: scriptDrivers)
    func scriptDriverMatchesItsExpectedFailures(_ driver: ScriptDriver) throws {
        if let library = driver.library {
            try #require(FileManager.default.fileExists(atPath: library), "\(library) is missing: scripts/test.sh installs it")
        }
        let script = Self.root.appendingPathComponent("drivers/\(driver.directory)/\(driver.script)").path
        try expectOnlyKnownFailures(driver: "\(driver.interpreter) \(script)", directory: driver.directory)
    }

    /// Built by scripts/build-rust-driver.sh (scripts/test.sh runs it first).
    @Test func rustOAuth2DriverMatchesItsExpectedFailures() throws {
        let binary = Self.root.appendingPathComponent(".build/rust-oauth2/release/authmock-rust-oauth2-driver")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "run scripts/build-rust-driver.sh first")
        try expectOnlyKnownFailures(driver: binary.path, directory: "rust-oauth2")
    }

    @Test func urlSessionDriverMatchesItsExpectedFailures() throws {
        let binary = try authmockBinary().deletingLastPathComponent().appendingPathComponent("authmock-urlsession-driver")
        try expectOnlyKnownFailures(driver: binary.path, directory: "swift-urlsession")
    }

    /// Built by scripts/build-go-driver.sh (scripts/test.sh runs it first).
    @Test func goDriverMatchesItsExpectedFailures() throws {
        let binary = Self.root.appendingPathComponent(".build/authmock-go-oauth2-driver")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "run scripts/build-go-driver.sh first")
        try expectOnlyKnownFailures(driver: binary.path, directory: "go-oauth2")
    }

    /// Built by scripts/build-java-driver.sh NAME (scripts/test.sh runs it first), which writes .build/NAME/run.
    @Test(arguments: ["java-okhttp", "java-google-oauth-client"])
    func javaDriverMatchesItsExpectedFailures(_ name: String) throws {
        let run = Self.root.appendingPathComponent(".build/\(name)/run")
        try #require(FileManager.default.isExecutableFile(atPath: run.path), "run scripts/build-java-driver.sh \(name) first")
        try expectOnlyKnownFailures(driver: run.path, directory: name, jobs: 2)
    }
}
