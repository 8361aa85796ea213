public import AuthmockCore
public import DriverProtocol
import Foundation
import Logging

/// The built-in dialects written as dialect files (`dialects/*.yaml`): each
/// served by `DeclaredDialect`, like a user's file. The files travel inside
/// the binary twice: as written (`authmock dialects NAME` prints it) and as
/// the loader compiled it (served without reading YAML here; the loader
/// lives above the server). BuiltinDialectTests fails when either differs
/// from `dialects/`; scripts/regen-docs.sh writes both.
public enum BuiltinDialects {
    /// The names, in the order `dialects/` lists them.
    public static var names: [String] { files.map(\.name) }

    /// A built-in dialect file as written.
    public static func file(_ name: String) -> String? {
        files.first { $0.name == name }?.yaml
    }

    /// A built-in dialect file's `settings`, by key, as flags would give them.
    public static func settings(_ name: String) -> [String: String] {
        files.first { $0.name == name }?.settings ?? [:]
    }

    /// A built-in dialect as the loader compiled it.
    public static func description(_ name: String) -> DialectDescription? {
        descriptions[name]
    }

    /// Decoded once; a file that does not decode is left out (its dialect
    /// then unknown) and logged with the reason: a build defect, which
    /// BuiltinDialectTests catches before a release.
    private static let descriptions: [String: DialectDescription] = {
        var result: [String: DialectDescription] = [:]
        for file in files {
            do {
                result[file.name] = try JSONDecoder().decode(DialectDescription.self, from: Data(file.json.utf8))
            } catch {
                Logger(label: "authmock.dialects").error("the built-in dialect \(file.name) does not decode, so it is not served: \(error)")
            }
        }
        return result
    }()
}

extension ServerOptions {
    /// The settings of the built-in dialect file `profile` names (its
    /// rotation), where `given` (the keys a flag, a variable or a config
    /// file set) has none: what `authmock serve --dialect NAME` serves.
    public mutating func applyDialectSettings(except given: Set<String> = []) throws(SettingsError) {
        let settings = BuiltinDialects.settings(profile)
        for setting in ServerSetting.all where !given.contains(setting.key) {
            if let text = settings[setting.key] {
                setting.apply(try setting.parse(text, from: "dialects/\(profile).yaml: \(setting.key)"), to: &self)
            }
        }
    }
}
