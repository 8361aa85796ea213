import DriverKit
import Foundation
import ReferenceClient

// The reference driver: authmock's correct client behind the driver
// protocol. `--fault NAME` (repeatable) switches on one classic bug, so the
// suite can be shown to catch it.
var faults: Set<ClientFault> = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--fault":
        guard let name = arguments.popFirst(), let fault = ClientFault(rawValue: name) else {
            Driver.log("--fault takes one of: \(ClientFault.allCases.map(\.rawValue).joined(separator: ", "))")
            exit(2)
        }
        faults.insert(fault)
    case "--help", "-h":
        print("usage: authmock-reference-driver [--fault NAME]...\nfaults: \(ClientFault.allCases.map(\.rawValue).joined(separator: ", "))")
        exit(0)
    default:
        Driver.log("unknown argument \(argument)")
        exit(2)
    }
}

/// Maps the client's outcomes onto the protocol's.
struct ReferenceDriver: DriverClient {
    let client: ReferenceClient

    func login(username: String, password: String) async -> DriverOutcome {
        convert(await client.login(username: username, password: password))
    }

    func request(_ request: DriverRequest) async -> DriverOutcome {
        convert(await client.request(method: request.method, path: request.path, headers: request.headers, body: request.body))
    }

    func convert(_ outcome: ClientOutcome) -> DriverOutcome {
        let kind: DriverOutcome.Kind = switch outcome.kind {
        case .ok: .ok
        case .httpError: .httpError
        case .reauthRequired: .reauthRequired
        case .transportError: .transportError
        }
        return DriverOutcome(kind, status: outcome.status, body: outcome.body, message: outcome.message)
    }
}

let chosenFaults = faults
let name = faults.isEmpty ? "authmock-reference" : "authmock-reference (faults: \(faults.map(\.rawValue).sorted().joined(separator: ", ")))"
await Driver.run(name: name, version: "0.1.0", profiles: ReferenceClient.profiles) { hello in
    ReferenceDriver(client: ReferenceClient(baseURL: hello.baseURL, profile: hello.profile, clientID: hello.clientID, clientSecret: hello.clientSecret, faults: chosenFaults))
}
