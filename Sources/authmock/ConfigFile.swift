import AuthmockCore
import Foundation
import Yams

/// The YAML file `serve --config` reads. Every key is optional; flags win
/// over the file. Unknown keys are errors, so a typo never silently does nothing.
struct ConfigFile: Decodable {
    var profile: String?
    var host: String?
    var port: Int?
    var accessTTL: Int?
    var signInAccessTTL: Int?
    var refreshTTL: Int?
    var rotateRefresh: Bool?
    var reuseGrace: Int?
    var audience: String?
    var publicURL: String?
    var maxBody: Int?
    var signingKey: String?
    var journalLimit: Int?
    var adminToken: String?
    var oauth2Errors: String?
    var rotationHeader: String?
    var rotateEvery: Int?
    var rotationGrace: Int?
    var refreshFailureStatus: Int?
    var users: [User]?
    var clients: [Client]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case profile, host, port, audience, users, clients
        case accessTTL = "access_ttl", signInAccessTTL = "sign_in_access_ttl", refreshTTL = "refresh_ttl", rotateRefresh = "rotate_refresh"
        case reuseGrace = "reuse_grace", publicURL = "public_url", maxBody = "max_body", signingKey = "signing_key"
        case journalLimit = "journal_limit", adminToken = "admin_token"
        case oauth2Errors = "oauth2_errors", rotationHeader = "rotation_header", rotateEvery = "rotate_every"
        case rotationGrace = "rotation_grace", refreshFailureStatus = "refresh_failure_status"
    }

    static func load(path: String) throws -> ConfigFile {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigError("\(path): cannot read the file")
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ConfigError("\(path): \(error)")
        }
        guard let node else { return ConfigFile() }
        guard let mapping = node.mapping else {
            throw ConfigError("\(path):\(node.mark.map { "\($0.line):\($0.column)" } ?? "1:1"): expected a mapping of settings")
        }
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        for key in mapping.keys {
            guard let name = key.string, known.contains(name) else {
                let mark = key.mark.map { "\($0.line):\($0.column)" } ?? "?"
                throw ConfigError("\(path):\(mark): unknown setting '\(key.string ?? "?")'; expected one of: \(known.sorted().joined(separator: ", "))")
            }
        }
        do {
            return try YAMLDecoder().decode(ConfigFile.self, from: node)
        } catch let error as DecodingError {
            throw ConfigError("\(path): \(describe(error))")
        }
    }

    init() {}
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
