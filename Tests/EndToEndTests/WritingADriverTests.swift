import Foundation
import Testing

/// The Python driver in docs/writing-a-driver.md, run as written against
/// part of the built-in suite through the real `authmock` binary.
struct WritingADriverTests {
    @Test func thePythonExampleDriverWorks() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/writing-a-driver.md"), encoding: .utf8)
        let block = try #require(page.firstMatch(of: /<!-- python-driver:begin -->\n```python\n([\s\S]*?)```\n<!-- python-driver:end -->/))
        let code = String(block.1)
        #expect(code.split(separator: "\n").count < 60, "the example must stay under 60 lines")
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("example-driver-\(UUID()).py")
        try code.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let result = try runAuthmock([
            "run", root.appendingPathComponent("scenarios").path, "--driver", "python3 \(script.path)",
            "--profile", "oauth2", "--case", "1.1", "--case", "1.2", "--case", "2.1", "--case", "3.1", "--case", "5.1", "--case", "7.1",
        ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("6 passed, 0 failed"), "\(result.stdout)")
    }
}
