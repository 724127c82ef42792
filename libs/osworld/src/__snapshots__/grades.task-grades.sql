select tg.* from osworld_task_grades tg
join tasks t on t.run_id = tg.run_id and t.task_id = tg.task_id
where tg.run_id = $1
order by t.seq

-- parameters:
-- $1 = "run-1"
