import AuthmockCore
public import AuthmockServer

/// Server settings a scenario overrides, by key (the table in
/// `ServerSetting.swift`: the same keys as the config file).
public struct ServerSettings: Sendable {
    public var values: [String: SettingValue] = [:]

    package init() {}

    public subscript(key: String) -> SettingValue? { values[key] }

    package func apply(to options: inout ServerOptions) {
        for setting in ServerSetting.all { if let value = values[setting.key] { setting.apply(value, to: &options) } }
    }

    /// The block as a file's spec (a case's `server:`, a dialect's
    /// `settings:`): every setting a case may set, typed as the server checks it.
    package static func spec(_ name: String) -> ObjectSpec {
        ObjectSpec(
            name,
            ServerSetting.all.filter(\.inScenarios).map { setting in
                let shape: Shape =
                    switch setting.type {
                    case .integer(let minimum): .integer(minimum: minimum)
                    case .boolean: .boolean
                    case .string: .string()
                    case .choice(let allowed): .string(oneOf: allowed)
                    }
                return Field(setting.key, shape, "\(setting.doc) (default \(setting.defaultText))")
            })
    }
}
