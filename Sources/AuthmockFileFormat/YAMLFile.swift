import AuthmockCore
import AuthmockServer
import Foundation
package import Yams

/// Reading one of authmock's YAML files (cases, dialects, plans, expected
/// failures, the config file): its text, its tree checked against a spec
/// with every problem at file:line:column, alias bombs refused before any
/// walk, and the server settings block several of them share.
package enum YAMLFile {
    /// A YAML file's text, for any format's loader.
    package static func readText(_ file: String) -> Result<String, Problems> {
        func problem(_ message: String) -> Result<String, Problems> {
            .failure(Problems(list: [ScenarioError(file: file, line: 1, column: 1, message: message)]))
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else { return problem("no such file") }
        guard !isDirectory.boolValue else { return problem("is a directory, not a file") }
        guard let data = FileManager.default.contents(atPath: file) else { return problem("the file cannot be read (permissions?)") }
        guard let text = String(data: data, encoding: .utf8) else { return problem("cannot read the file as UTF-8 text") }
        return .success(text)
    }

    package struct Problems: Error {
        package var list: [ScenarioError]
        package init(list: [ScenarioError]) { self.list = list }
    }

    /// A YAML file's tree checked against `spec`: YAML errors and bombs at
    /// their place, then every shape problem at once (`Problems`).
    package static func checkedTree(_ text: String, file: String, spec: ObjectSpec, expected: String) throws -> (SpecValue, SpecChecker) {
        let node: Node
        do {
            guard let composed = try compose(text, file: file) else {
                throw ScenarioError(file: file, line: 1, column: 1, message: "the file is empty; expected \(expected)")
            }
            node = composed
        } catch let error as ScenarioError {
            throw error
        } catch let error as YamlError {
            throw yamlError(error, file: file, text: text)
        } catch {
            throw ScenarioError(file: file, line: 1, column: 1, message: "\(error)")
        }
        if let bomb = Self.expansionProblem(node, file: file) { throw bomb }
        let checker = SpecChecker(file: file)
        let value = try checker.check(node, .object(spec), "")
        // Shape problems first, all of them; the model is built only from a sound tree.
        let found = checker.found.problems.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        if !found.isEmpty { throw Problems(list: found) }
        return (value, checker)
    }

    /// Server settings as a scenario's `server:` or a dialect file's
    /// `settings:` gives them, checked as the server checks them.
    package static func settings(_ value: SpecValue?, checker: SpecChecker, path: String) throws(ScenarioError) -> ServerSettings {
        var settings = ServerSettings()
        guard let value, let o = value.object else { return settings }
        for (key, item) in o {
            guard let setting = ServerSetting.named(key) else { throw checker.error(at: item.mark, "\(path).\(key): not a server setting") }
            let typed: SettingValue =
                switch item {
                case .integer(let number, _): .integer(number)
                case .boolean(let flag, _): .boolean(flag)
                default: .string(item.string ?? "")
                }
            do {
                settings.values[key] = try setting.check(typed, from: "\(path).\(key)")
            } catch {
                throw checker.error(at: item.mark, error.description)
            }
        }
        // Cross-field rules (a valid header name, a 4xx status) as the server checks them.
        var options = ServerOptions()
        settings.apply(to: &options)
        do {
            try options.dialectOptions.validate()
            try options.tokens.validate()
        } catch {
            throw checker.error(at: value.mark, "\(path): \(error.description)")
        }
        return settings
    }

    /// Values a file may expand to, aliases and merge keys counted each time
    /// they repeat what they point at: scenario and dialect files hold a few
    /// thousand, and 600 bytes of nested aliases expand to a million.
    package static let maxExpandedValues = 100_000

    /// A file whose aliases or merge keys expand past `maxExpandedValues`
    /// (a "billion laughs"), refused before anything walks it. Counts
    /// without recursion and stops at the limit, so it costs at most that.
    package static func expansionProblem(_ root: Node, file: String) -> ScenarioError? {
        var pending = [root]
        var count = 0
        while let node = pending.popLast() {
            count += 1
            if count > maxExpandedValues {
                return ScenarioError(
                    file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1,
                    message:
                        "the file expands to more than \(maxExpandedValues) values: its YAML aliases (*name) or merge keys (<<) repeat what they point at too often; write the values out"
                )
            }
            switch node {
            case .mapping(let mapping):
                for (key, value) in mapping {
                    pending.append(key)
                    pending.append(value)
                }
            case .sequence(let sequence): pending.append(contentsOf: sequence)
            default: break
            }
        }
        return nil
    }

    /// The same bound on the text, before the parser expands anything.
    package static func textExpansionProblem(_ text: String, file: String) -> ScenarioError? {
        guard let line = YAMLExpansion.lineBeyond(maxExpandedValues, in: text) else { return nil }
        return ScenarioError(
            file: file, line: line, column: 1,
            message:
                "the file expands to more than \(maxExpandedValues) values: its YAML aliases (*name) or merge keys (<<) repeat what they point at too often; write the values out"
        )
    }

    /// YAML text composed, refused first if its aliases expand past the bound.
    package static func compose(_ text: String, file: String) throws -> Node? {
        if let bomb = textExpansionProblem(text, file: file) { throw bomb }
        return try Yams.compose(yaml: text)
    }

    /// A YAML syntax problem at its place in the file.
    package static func problem(yaml error: any Error, file: String, text: String? = nil) -> ScenarioError {
        guard let error = error as? YamlError else { return ScenarioError(file: file, line: 1, column: 1, message: "\(error)") }
        return yamlError(error, file: file, text: text)
    }

    /// `text`: the file, to say so when the character the parser stopped at is a tab.
    private static func yamlError(_ error: YamlError, file: String, text: String? = nil) -> ScenarioError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _):
            var message = "invalid YAML: \(problem)\(context.map { " \($0.text)" } ?? "")"
            let line = text.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(mark.line - 1).first }
            if let line, line.dropFirst(max(0, mark.column - 1)).first == "\t" || line.prefix(while: { $0 == " " || $0 == "\t" }).contains("\t") {
                message += " (a tab: YAML indents with spaces only)"
            }
            return ScenarioError(file: file, line: mark.line, column: mark.column, message: message)
        default:
            return ScenarioError(file: file, line: 1, column: 1, message: "invalid YAML: \(error)")
        }
    }
}

extension Result where Failure == YAMLFile.Problems {
    /// Every problem found, in file order (empty when the file is valid).
    package var problems: [ScenarioError] {
        if case .failure(let problems) = self { return problems.list }
        return []
    }

    /// The value, or the first problem thrown.
    package func firstProblemThrown() throws(ScenarioError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let problems): throw problems.list[0]
        }
    }
}
