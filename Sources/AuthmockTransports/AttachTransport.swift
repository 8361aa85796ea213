public import AuthmockScenario

/// `authmock run --attach`: each conversation takes an idle client from the
/// hub (waiting for one to attach), runs on it, and gives it back.
extension AttachHub: DriverTransport {
    public nonisolated var helloPatience: Double { timeout }
    public nonisolated var capabilitiesArriveWithHello: Bool { true }

    public nonisolated func converse<T: Sendable>(
        environment: [String: String], _ body: @escaping @Sendable (DriverChannel) async throws -> T
    ) async -> (result: Result<T, any Error>, log: String) {
        guard let client = await acquire() else {
            return (.failure(DriverFailure.cannotStart(await noClientReason)), "")
        }
        let channel = DriverChannel { line in try await client.send(line) }
        client.serve(channel)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(channel))
        } catch {
            result = .failure(error)
        }
        let broken = await channel.failure != nil
        let unanswered = await channel.hasUnanswered
        let succeeded = (try? result.get()) != nil
        await release(client, clean: succeeded && !broken && !unanswered)
        // Attached clients have no stderr; the report says which one ran the case.
        return (result, "attached client \(client.number) (\(client.peer))")
    }
}
