-- wrk script: POST /v1/generate with a fixed question.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"question":"How many students take each class?"}'
