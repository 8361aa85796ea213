import Foundation
import TestSupport
import Testing

/// README.md's curl walkthrough, run as written against the real binary.
struct ReadmeWalkthroughTests {
    @Test func walkthroughRunsAsDocumented() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.firstMatch(of: /<!-- walkthrough:begin -->\n```sh\n([\s\S]*?)```\n<!-- walkthrough:end -->/))
        let server = try ServingBinary()
        defer { _ = server.interrupt() }

        let run = try await runProcess(
            "/bin/bash", ["-euo", "pipefail", "-c", String(section.1)], environment: ["BASE": server.baseURL], mergeOutput: true)
        let output = run.stdout

        #expect(run.status == 0, "\(output)")
        #expect(output.contains(#""sub":"alice""#), "\(output)")
        #expect(
            output.contains(#"{"error":"invalid_grant","error_description":"Refresh token already used; its whole family is now revoked"}"#),
            "\(output)")
        #expect(
            output.contains(#"WWW-Authenticate: Bearer realm="authmock", error="invalid_token", error_description="Access token revoked""#),
            "\(output)")
    }
}
