import ArgumentParser
import AuthmockServer

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract:
            "Print every server setting: flag, environment variable, config and scenario key, default (the source of the docs' settings tables).")

    func run() {
        print(ServerSetting.markdownTable(), terminator: "")
    }
}
