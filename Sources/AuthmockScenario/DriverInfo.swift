import AuthmockCore
import AuthmockServer
import DriverProtocol
import Foundation

/// A driver's `hello` answer: what it wraps and what it can do.
public struct DriverInfo: Sendable, Equatable {
    public init(name: String? = nil, version: String? = nil, profiles: [String]? = nil, capabilities: [String] = [], renewalMargin: Double? = nil) {
        self.name = name
        self.version = version
        self.profiles = profiles
        self.capabilities = capabilities
        self.renewalMargin = renewalMargin
    }

    public var name: String?
    public var version: String?
    /// nil: the driver did not say (every dialect is tried).
    public var profiles: [String]?
    public var capabilities: [String]
    /// Seconds before expiry the client renews a token (hello's `renewalMargin`).
    public var renewalMargin: Double? = nil

    /// A driver whose `hello` names dialects, none of which exists, can run
    /// no case: a misspelt name ("oauth") would otherwise SKIP the whole suite
    /// and leave the run green having judged nothing.
    static func speaksAKnownDialect(_ info: DriverInfo, declared: Set<String> = []) -> Result<DriverInfo, ScenarioRunner.HelloFailure> {
        guard let profiles = info.profiles, !profiles.contains(where: { Dialects.names.contains($0) || declared.contains($0) }) else {
            return .success(info)
        }
        let named = profiles.map { "'\($0)'\(Suggestion.hint(for: $0, in: Dialects.names))" }.joined(separator: ", ")
        return .failure(
            ScenarioRunner.HelloFailure(
                reason:
                    "hello lists the dialects \(named) in `profiles`, and none is a dialect authmock serves (\(Dialects.names.joined(separator: ", "))); a dialect of your own: pass its file with --dialect FILE",
                stderr: ""))
    }

    /// Why this driver cannot run the case in this dialect, or nil. A
    /// dialect is spoken by a driver that names it, or, for every dialect
    /// but oauth2 (the one without a description), by one that configures
    /// its client from `hello` (the `dialect` capability). A driver that
    /// lists no dialects is taken to speak the ones the protocol names.
    public func cannotRun(_ scenario: Scenario, profile: String) -> String? {
        let described = profile != DialectName.oauth2 && capabilities.contains(Capability.dialect)
        if !BuiltinSuite.caseDialects.contains(profile), !described, !(profiles ?? []).contains(profile) {
            return "the driver does not speak the declared dialect \(profile) (it neither lists it nor has the `dialect` capability)"
        }
        if !described, let profiles, !profiles.contains(profile) {
            return "the driver does not speak \(profile) (it lists \(profiles.joined(separator: ", ")))"
        }
        if scenario.callsAnotherHost && !capabilities.contains(Capability.url) {
            return "the case calls another host, and the driver does not declare the `url` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.streamsBodies && !capabilities.contains(Capability.bodyStream) {
            return
                "the case sends a one-shot streamed body, and the driver does not declare the `bodyStream` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.sendsGraphQL && !capabilities.contains(Capability.graphQL) {
            return "the case sends GraphQL operations, and the driver does not declare the `graphql` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.signsInWithOpenID && !capabilities.contains(Capability.oidc) {
            return
                "the case signs in as an OpenID Connect client, and the driver does not declare the `oidc` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.signsOut && !capabilities.contains(Capability.logout) {
            return "the case signs the user out, and the driver does not declare the `logout` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.cancelsCalls && !capabilities.contains(Capability.cancel) {
            return "the case cancels a call in flight, and the driver does not declare the `cancel` capability in hello (docs/driver-protocol.md)"
        }
        if scenario.usesInstances && !capabilities.contains(Capability.instances) {
            return
                "the case calls from a second instance of the app's client (an extension, a widget), and the driver does not declare the `instances` capability in hello (docs/driver-protocol.md)"
        }
        return nil
    }
}

extension Scenario {
    /// Whether any call of a `request` or `parallel` step is such.
    func anyCall(_ test: (CallSpec) -> Bool) -> Bool {
        steps.contains { step in
            switch step {
            case .request(let spec, _): test(spec)
            case .parallel(let specs): specs.contains(where: test)
            default: false
            }
        }
    }

    /// Whether a call comes from an instance of the client other than the app's own.
    var usesInstances: Bool { anyCall { $0.otherInstance != nil } }

    /// Whether a call hands its body over as a one-shot stream.
    var streamsBodies: Bool { anyCall(\.bodyStream) }

    /// Whether a call is a GraphQL operation.
    var sendsGraphQL: Bool { anyCall(\.graphQL) }

    /// Whether a step signs in as an OpenID Connect client (`login: {openid: true}`).
    var signsInWithOpenID: Bool {
        steps.contains { if case .login(_, _, true, _) = $0 { true } else { false } }
    }

    /// Whether a step signs the user out (`logout`).
    var signsOut: Bool {
        steps.contains { if case .logout = $0 { true } else { false } }
    }

    /// Whether a step cancels a call (`cancel`).
    var cancelsCalls: Bool {
        steps.contains { if case .cancel = $0 { true } else { false } }
    }

    /// Whether a step sends a request to another host (`//foreign/...`).
    var callsAnotherHost: Bool { anyCall { Observation.target(of: $0.path).foreign } }
}
