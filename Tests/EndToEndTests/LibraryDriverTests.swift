import Foundation
import Testing

/// The drivers for real client libraries run through the whole suite with
/// their expected-failures files: nothing new fails, nothing errors, and no
/// known failure has quietly started passing.
@Suite(.serialized) struct LibraryDriverTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["python-authlib", "python-requests-oauthlib"])
    func driverMatchesItsExpectedFailures(_ name: String) throws {
        let directory = Self.root.appendingPathComponent("drivers/\(name)")
        let result = try runAuthmock([
            "run", Self.root.appendingPathComponent("scenarios").path,
            "--driver", "python3 \(directory.appendingPathComponent("driver.py").path)",
            "--expected-failures", directory.appendingPathComponent("expected-failures.yaml").path,
            "--profile", "oauth2", "--jobs", "4",
        ])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        // "failed" counts FAIL and ERROR.
        #expect(result.stdout.contains(" 0 failed"), "\(result.stdout)")
        // A known failure that passes means the library changed: update the list.
        // (6.1 is a timing-dependent SHOULD case for these libraries.)
        #expect(!result.stdout.contains("remove it from the expected-failures file") || result.stdout.contains("6.1"), "\(result.stdout)")
    }
}

extension LibraryDriverTests {
    @Test func urlSessionDriverMatchesItsExpectedFailures() throws {
        let binary = try authmockBinary().deletingLastPathComponent().appendingPathComponent("authmock-urlsession-driver")
        let result = try runAuthmock([
            "run", Self.root.appendingPathComponent("scenarios").path, "--driver", binary.path,
            "--expected-failures", Self.root.appendingPathComponent("drivers/swift-urlsession/expected-failures.yaml").path,
            "--profile", "oauth2", "--jobs", "4",
        ])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains(" 0 failed"), "\(result.stdout)")
    }
}

extension LibraryDriverTests {
    /// Built by scripts/build-go-driver.sh (scripts/test.sh runs it first).
    @Test func goDriverMatchesItsExpectedFailures() throws {
        let binary = Self.root.appendingPathComponent(".build/authmock-go-oauth2-driver")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "run scripts/build-go-driver.sh first")
        let result = try runAuthmock([
            "run", Self.root.appendingPathComponent("scenarios").path, "--driver", binary.path,
            "--expected-failures", Self.root.appendingPathComponent("drivers/go-oauth2/expected-failures.yaml").path,
            "--profile", "oauth2", "--jobs", "4",
        ])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains(" 0 failed"), "\(result.stdout)")
    }
}

extension LibraryDriverTests {
    /// Built by scripts/build-java-driver.sh (scripts/test.sh runs it first).
    @Test func javaDriverMatchesItsExpectedFailures() throws {
        let classes = Self.root.appendingPathComponent(".build/java-okhttp/Driver.class")
        try #require(FileManager.default.fileExists(atPath: classes.path), "run scripts/build-java-driver.sh first")
        let jars = ["okhttp", "okio", "gson"].map { "/usr/share/java/\($0).jar" }.joined(separator: ":")
        let result = try runAuthmock([
            "run", Self.root.appendingPathComponent("scenarios").path,
            "--driver", "java -cp \(Self.root.appendingPathComponent(".build/java-okhttp").path):\(jars) Driver",
            "--expected-failures", Self.root.appendingPathComponent("drivers/java-okhttp/expected-failures.yaml").path,
            "--profile", "oauth2", "--jobs", "2",
        ])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains(" 0 failed"), "\(result.stdout)")
    }
}
