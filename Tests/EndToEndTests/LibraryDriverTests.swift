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

    @Test(arguments: [
        "python-authlib", "python-requests-oauthlib", "python-gql", "python-google-auth", "python-requests-oauth2client",
    ])
    func pythonDriverMatchesItsExpectedFailures(_ name: String) throws {
        try expectOnlyKnownFailures(driver: "python3 \(Self.root.appendingPathComponent("drivers/\(name)/driver.py").path)", directory: name)
    }

    /// axios from Debian's node-axios (scripts/test.sh installs it), running drivers/browser's recipe file in Node.
    @Test func nodeAxiosDriverMatchesItsExpectedFailures() throws {
        try #require(FileManager.default.fileExists(atPath: "/usr/share/nodejs/axios/package.json"), "install node-axios (scripts/test.sh does)")
        try expectOnlyKnownFailures(driver: "node \(Self.root.appendingPathComponent("drivers/node-axios/driver.js").path)", directory: "node-axios")
    }

    /// The oauth2 gem from Debian's ruby-oauth2 (scripts/test.sh installs it).
    @Test func rubyOAuth2DriverMatchesItsExpectedFailures() throws {
        try #require(FileManager.default.fileExists(atPath: "/usr/lib/ruby/vendor_ruby/oauth2.rb"), "install ruby-oauth2 (scripts/test.sh does)")
        try expectOnlyKnownFailures(driver: "ruby \(Self.root.appendingPathComponent("drivers/ruby-oauth2/driver.rb").path)", directory: "ruby-oauth2")
    }

    /// LWP::Authen::OAuth2 from Debian's liblwp-authen-oauth2-perl (scripts/test.sh installs it).
    @Test func perlLWPAuthenOAuth2DriverMatchesItsExpectedFailures() throws {
        try #require(FileManager.default.fileExists(atPath: "/usr/share/perl5/LWP/Authen/OAuth2.pm"), "install liblwp-authen-oauth2-perl (scripts/test.sh does)")
        try expectOnlyKnownFailures(
            driver: "perl \(Self.root.appendingPathComponent("drivers/perl-lwp-authen-oauth2/driver.pl").path)", directory: "perl-lwp-authen-oauth2")
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
