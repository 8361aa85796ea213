import ArgumentParser
import AuthmockServer

struct GraphQLSchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graphql-schema",
        abstract: "Print the schema of /graphql as SDL (the source of the schema in docs/graphql.md).",
        discussion: "Feed it to a client's code generator (Apollo's codegen, gql-codegen) instead of running an introspection query."
    )

    func run() throws {
        print(try GraphQLSchemaText.sdl(), terminator: "")
    }
}
