import Foundation

/// A driver conversation over the run's transport: a child process per case
/// (stdio), or a client attached over a WebSocket.
enum DriverLink {
    static func with<T: Sendable>(
        _ options: RunOptions, environment: [String: String],
        _ body: @escaping @Sendable (DriverChannel) async throws -> T
    ) async -> (result: Result<T, any Error>, stderr: String) {
        guard let hub = options.attach else {
            return await DriverProcess.with(command: options.driver, environment: environment, body)
        }
        guard let client = await hub.acquire() else {
            return (.failure(DriverFailure.cannotStart(await hub.noClientReason)), "")
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
        await hub.release(client, clean: succeeded && !broken && !unanswered)
        // Attached clients have no stderr; the report says which one ran the case.
        return (result, "attached client \(client.number) (\(client.peer))")
    }
}
