public import DriverKit

/// The reference client behind DriverKit's `DriverClient`: the reference
/// driver's, and the one AuthmockTesting's own tests run in process.
/// Maps the client's outcomes onto the protocol's.
public struct ReferenceDriver: DriverClient {
    public let client: ReferenceClient

    public init(client: ReferenceClient) { self.client = client }

    public func login(username: String, password: String) async -> DriverOutcome {
        convert(await client.login(username: username, password: password))
    }

    public func login(username: String, password: String, openID: Bool) async -> DriverOutcome {
        convert(await client.login(username: username, password: password, openID: openID))
    }

    public func request(_ request: DriverRequest) async -> DriverOutcome {
        let outcome = await client.request(
            method: request.method, path: request.target, headers: request.headers, body: request.body, bodyStream: request.bodyStream,
            instance: request.instance)
        // A cancelled call's app is gone: whatever but success it ended in, it was cancelled.
        if Task.isCancelled && outcome.kind != .ok { return DriverOutcome(.cancelled, message: outcome.message) }
        return convert(outcome)
    }

    public func logout() async -> DriverOutcome {
        convert(await client.logout())
    }

    public func close() async {
        await client.close()
    }

    func convert(_ outcome: ClientOutcome) -> DriverOutcome {
        DriverOutcome(outcome.kind, status: outcome.status, body: outcome.body, message: outcome.message, idTokenClaims: outcome.idTokenClaims)
    }
}
