import AuthmockScenario
public import DriverKit

/// A Swift client under test, written as a DriverKit `DriverClient` (sign
/// in, call, sign out: the driver protocol's vocabulary): what it is, and
/// how to make one for a case's server. The same adapter serves as a stdio
/// driver (`Driver.run`) or attached to a runner (`Driver.attach`).
public struct ClientUnderTest: Sendable {
    /// Its name and version in reports, the dialects it speaks (built-in
    /// dialects such as `oauth2`, or built-in dialect files), the protocol
    /// extensions it implements, and how early it renews a token.
    public var identity: DriverIdentity
    /// A fresh client for each case, configured from the case server's `hello`.
    public var makeClient: @Sendable (Hello) async throws -> any DriverClient

    public init(identity: DriverIdentity, makeClient: @escaping @Sendable (Hello) async throws -> any DriverClient) {
        self.identity = identity
        self.makeClient = makeClient
    }

    /// `profiles`: the dialects it speaks; `capabilities`: the `Capability`
    /// values it implements (`url`, `logout`, ...); `renewalMargin`: seconds
    /// before expiry it renews a token by its own clock, if it does.
    public init(
        name: String, version: String = "", profiles: [String] = ["oauth2"], capabilities: [String] = [], renewalMargin: Double? = nil,
        makeClient: @escaping @Sendable (Hello) async throws -> any DriverClient
    ) {
        self.init(
            identity: DriverIdentity(name: name, version: version, profiles: profiles, capabilities: capabilities, renewalMargin: renewalMargin),
            makeClient: makeClient)
    }

    /// What the runner would learn from its `hello`.
    var driverInfo: DriverInfo {
        DriverInfo(
            name: identity.name, version: identity.version, profiles: identity.profiles, capabilities: identity.capabilities,
            renewalMargin: identity.renewalMargin)
    }
}
