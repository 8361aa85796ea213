import AuthmockFileFormat
import Foundation
import Yams

/// A driver's list of cases its library is known to fail, with the reason:
///
///     1.5: "requests-oauthlib refreshes once per thread (no lock)"
///     6.2 [oauth2]: "golang.org/x/oauth2 refreshes only by expiry (golang/oauth2#...)"
public enum ExpectedFailures {
    public static func load(path: String) throws -> [String: String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ScenarioError(file: path, line: 1, column: 1, message: "cannot read the expected-failures file")
        }
        let composed: Node?
        do {
            composed = try YAMLFile.compose(text, file: path)
        } catch let bomb as ScenarioError {
            throw bomb
        } catch {
            // A syntax error at its place, as a scenario file's.
            throw YAMLFile.problem(yaml: error, file: path, text: text)
        }
        guard let node = composed else { return [:] }
        if let bomb = YAMLFile.expansionProblem(node, file: path) { throw bomb }
        guard let mapping = node.mapping else {
            throw ScenarioError(
                file: path, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1, message: "expected a mapping of case id to reason")
        }
        var result: [String: String] = [:]
        for (key, value) in mapping {
            guard let id = key.string, let reason = value.string, !reason.isEmpty else {
                throw ScenarioError(file: path, line: key.mark?.line ?? 1, column: key.mark?.column ?? 1, message: "each entry is `case id: reason`")
            }
            result[id] = reason
        }
        return result
    }
}
