import DriverKit
import Foundation
import ReferenceClient

// The reference driver: authmock's correct client behind the driver
// protocol. `--fault NAME` (repeatable) switches on one classic bug, so the
// suite can be shown to catch it.
var faults: Set<ClientFault> = []
var maxConnections: Int? = nil
var proactive = ProactiveRefresh.early
var attachURL: String? = nil
var connections = 1
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--max-connections-per-host":
        guard let value = arguments.popFirst().flatMap(Int.init), value >= 1 else {
            Driver.log("--max-connections-per-host takes a whole number >= 1")
            exit(2)
        }
        maxConnections = value
    case "--proactive-refresh":
        guard let value = arguments.popFirst().flatMap(ProactiveRefresh.init) else {
            Driver.log("--proactive-refresh takes one of: \(ProactiveRefresh.allCases.map(\.rawValue).joined(separator: ", "))")
            exit(2)
        }
        proactive = value
    case "--attach":
        guard let value = arguments.popFirst() else {
            Driver.log("--attach takes the runner's URL (ws://HOST:PORT/attach)")
            exit(2)
        }
        attachURL = value
    case "--connections":
        guard let value = arguments.popFirst().flatMap(Int.init), value >= 1 else {
            Driver.log("--connections takes a whole number >= 1")
            exit(2)
        }
        connections = value
    case "--fault":
        guard let name = arguments.popFirst(), let fault = ClientFault(rawValue: name) else {
            Driver.log("--fault takes one of: \(ClientFault.allCases.map(\.rawValue).joined(separator: ", "))")
            exit(2)
        }
        faults.insert(fault)
    case "--help", "-h":
        print(
            """
            usage: authmock-reference-driver [--fault NAME]... [--max-connections-per-host N] [--proactive-refresh MODE]
                                             [--attach ws://HOST:PORT/attach [--connections N]]
            faults: \(ClientFault.allCases.map(\.rawValue).joined(separator: ", "))
            proactive refresh modes (all correct): \(ProactiveRefresh.allCases.map(\.rawValue).joined(separator: ", ")) (default early)
            """)
        exit(0)
    default:
        Driver.log("unknown argument \(argument)")
        exit(2)
    }
}

let chosenFaults = faults
let chosenPool = maxConnections
let chosenProactive = proactive
let name = faults.isEmpty ? "authmock-reference" : "authmock-reference (faults: \(faults.map(\.rawValue).sorted().joined(separator: ", ")))"
let identity = DriverIdentity(
    name: name, version: "0.1.0", profiles: ReferenceClient.profiles,
    capabilities: [
        Capability.url, Capability.logout, Capability.bodyStream, Capability.graphQL, Capability.oidc, Capability.dialect, Capability.cancel,
        Capability.instances,
    ])
struct CannotSpeak: Error, CustomStringConvertible { let description: String }
@Sendable func makeClient(_ hello: Hello) throws -> any DriverClient {
    if let reason = ReferenceClient.cannotSpeak(hello) { throw CannotSpeak(description: reason) }
    return ReferenceDriver(
        client: ReferenceClient(
            baseURL: hello.baseURL, clientID: hello.clientID, clientSecret: hello.clientSecret, faults: chosenFaults,
            maxConnectionsPerHost: chosenPool, proactive: chosenProactive, dialect: hello.dialect, caCertificate: hello.caCertificate))
}
if let attachURL {
    do {
        try await Driver.attach(to: attachURL, identity: identity, connections: connections, makeClient: makeClient)
    } catch {
        Driver.log("\(error)")
        exit(1)
    }
} else {
    await Driver.run(
        name: identity.name, version: identity.version, profiles: identity.profiles, capabilities: identity.capabilities, makeClient: makeClient)
}
