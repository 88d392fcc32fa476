"""The NiceGUI main file of the UI tests (`pytest.mark.nicegui_main_file`): the app as
`python -m audiopub.ui` runs it, on the services the test's fixture built (`ui_services`)."""

from ui_services import services_for_the_app

from audiopub.ui.app import main

if __name__ in {"__main__", "__mp_main__"}:
    main(services=services_for_the_app())
