import AuthmockFileFormat
import AuthmockCore
import AuthmockScenario
import AuthmockServer
import Foundation
import Yams

/// The YAML file `serve --config` reads: every server setting by its key
/// (the table in ServerSetting.swift), plus users, clients and the secrets.
/// Every key is optional; flags and environment variables win over the file.
/// Unknown keys are errors, so a typo never silently does nothing.
struct ConfigFile {
    var settings: [String: SettingValue] = [:]
    var signingKey: String?
    var adminToken: String?
    var users: [User]?
    var clients: [Client]?

    /// Keys that are not server settings.
    static let otherKeys = ["signing_key", "admin_token", "users", "clients"]

    static func load(path: String) throws -> ConfigFile {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigError("\(path): cannot read the file")
        }
        let node: Node?
        do {
            if let bomb = YAMLFile.textExpansionProblem(text, file: path) { throw ConfigError("\(bomb)") }
            node = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ConfigError("\(path): \(error)")
        }
        guard let node else { return ConfigFile() }
        func place(_ node: Node) -> String { node.mark.map { "\($0.line):\($0.column)" } ?? "1:1" }
        guard let mapping = node.mapping else { throw ConfigError("\(path):\(place(node)): expected a mapping of settings") }
        let known = ServerSetting.all.map(\.key) + otherKeys
        var file = ConfigFile()
        for (key, value) in mapping {
            guard let name = key.string, known.contains(name) else {
                throw ConfigError(
                    "\(path):\(place(key)): unknown setting '\(key.string ?? "?")'\(Suggestion.hint(for: key.string ?? "", in: known)); expected one of: \(known.sorted().joined(separator: ", "))"
                )
            }
            do {
                switch name {
                case "signing_key": file.signingKey = try YAMLDecoder().decode(String.self, from: value)
                case "admin_token": file.adminToken = try YAMLDecoder().decode(String.self, from: value)
                case "users": file.users = try YAMLDecoder().decode([User].self, from: value)
                case "clients": file.clients = try YAMLDecoder().decode([Client].self, from: value)
                default:
                    guard let setting = ServerSetting.named(name) else { continue }
                    file.settings[name] = try setting.check(typed(value), from: name)
                }
            } catch let error as DecodingError {
                throw ConfigError("\(path):\(place(value)): \(name): \(describe(error))")
            } catch let error as SettingsError {
                throw ConfigError("\(path):\(place(value)): \(error.description)")
            }
        }
        return file
    }

    /// A scalar as YAML typed it: a whole number, true/false, or a string.
    static func typed(_ node: Node) -> SettingValue {
        if node.tag.rawValue == Tag.Name.int.rawValue, let number = node.int { return .integer(number) }
        if node.tag.rawValue == Tag.Name.bool.rawValue, let flag = node.bool { return .boolean(flag) }
        return .string(node.string ?? "")
    }
}

struct ConfigError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A decoding error as one sentence: where (key path) and what was expected.
func describe(_ error: DecodingError) -> String {
    func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
    }
    switch error {
    case .typeMismatch(let type, let context): return "\(path(context.codingPath)): expected \(type)"
    case .valueNotFound(let type, let context): return "\(path(context.codingPath)): expected a \(type) value"
    case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])): required key is missing"
    case .dataCorrupted(let context): return "\(path(context.codingPath)): \(context.debugDescription)"
    @unknown default: return "\(error)"
    }
}
